package io.rulesync.client.stream;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * The node stream's wire definition, which the api serves and agents call: one bidirectional gRPC method,
 * {@code rulesync.v1.NodeSync/Stream}. The api writes {@code ServerFrame}s (versions' deltas, or "load a snapshot"), the
 * node writes {@code NodeFrame}s (where to resume, and its acks). Messages are the frames' bytes as they are: a frame of
 * deltas is made once and written to every stream that needs it, so no message is encoded per node.
 *
 * <p>Who the node is travels in the call's headers: its bearer token ({@code authorization}), and the cluster and node it
 * speaks for, which the token must be allowed; and what it can read: {@code rulesync-accept-encoding: deflate}.
 */
public final class NodeSync {
    public static final String SERVICE = "rulesync.v1.NodeSync";
    public static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    public static final Metadata.Key<String> CLUSTER =
            Metadata.Key.of("rulesync-cluster", Metadata.ASCII_STRING_MARSHALLER);
    public static final Metadata.Key<String> NODE = Metadata.Key.of("rulesync-node", Metadata.ASCII_STRING_MARSHALLER);
    /**
     * The frame encodings the node takes besides plain ({@code deflate}, see {@code ServerFrame}): an agent of a release
     * before deflate sends none, and gets plain frames.
     */
    public static final Metadata.Key<String> ACCEPT_ENCODING =
            Metadata.Key.of("rulesync-accept-encoding", Metadata.ASCII_STRING_MARSHALLER);
    /** The most a node may send in one message: a frame of 100 acks with their errors fits many times over. */
    public static final int MAX_NODE_MESSAGE = 256 * 1024;
    /** The most the api sends in one message: 100 deltas of a large cluster. */
    public static final int MAX_SERVER_MESSAGE = 64 * 1024 * 1024;

    public static final MethodDescriptor<byte[], byte[]> STREAM = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Stream"))
            .setRequestMarshaller(Bytes.INSTANCE)
            .setResponseMarshaller(Bytes.INSTANCE)
            .build();

    private NodeSync() {}

    /** A message is its bytes: handed to the transport as they are, without a copy into an intermediate buffer. */
    private enum Bytes implements MethodDescriptor.Marshaller<byte[]> {
        INSTANCE;

        @Override
        public InputStream stream(byte[] value) {
            return new Frame(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                if (stream instanceof KnownLength) {
                    // gRPC's message stream knows its length: one array of that size, read once. readAllBytes reads
                    // through an 8 KiB buffer and copies out of it (5 % of a thin agent's CPU in a profile).
                    byte[] message = new byte[stream.available()];
                    int read = stream.readNBytes(message, 0, message.length);
                    if (read == message.length && stream.read() == -1) {
                        return message;
                    }
                    throw new IOException("the message was not as long as its stream said: " + read + " of "
                            + message.length + " bytes");
                }
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Its length known, and drained into the transport's buffer in one write. */
    private static final class Frame extends ByteArrayInputStream implements KnownLength, Drainable {
        Frame(byte[] b) {
            super(b);
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            int n = count - pos;
            target.write(buf, pos, n);
            pos = count;
            return n;
        }
    }
}
