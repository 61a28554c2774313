package io.rulesync.client.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.KnownLength;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The stream's marshaller: a message's bytes in and out whole, whether or not the transport says how long it is. */
class NodeSyncTest {
    private static final byte[] MESSAGE = "{\"type\":\"acks\",\"acks\":[]}".getBytes(StandardCharsets.UTF_8);

    /** As gRPC hands a message over: a stream that knows its length. */
    private static final class Known extends ByteArrayInputStream implements KnownLength {
        Known(byte[] b) {
            super(b);
        }
    }

    @Test
    void aMessageIsReadWholeFromAStreamOfKnownLengthAndFromAnyOther() {
        assertThat(NodeSync.STREAM.parseRequest(new Known(MESSAGE))).isEqualTo(MESSAGE);
        assertThat(NodeSync.STREAM.parseResponse(new ByteArrayInputStream(MESSAGE)))
                .isEqualTo(MESSAGE);
        assertThat(NodeSync.STREAM.parseRequest(new Known(new byte[0]))).isEmpty();
        assertThat(NodeSync.STREAM.parseRequest(NodeSync.STREAM.streamRequest(MESSAGE)))
                .isEqualTo(MESSAGE);
    }

    @Test
    void aStreamLongerOrShorterThanItSaidIsRefused() {
        class Lying extends FilterInputStream implements KnownLength {
            private final int says;

            Lying(InputStream in, int says) {
                super(in);
                this.says = says;
            }

            @Override
            public int available() {
                return says;
            }
        }
        assertThatThrownBy(() ->
                        NodeSync.STREAM.parseRequest(new Lying(new ByteArrayInputStream(MESSAGE), MESSAGE.length - 1)))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("was not as long as its stream said");
        assertThatThrownBy(() ->
                        NodeSync.STREAM.parseRequest(new Lying(new ByteArrayInputStream(MESSAGE), MESSAGE.length + 1)))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(MESSAGE.length + " of " + (MESSAGE.length + 1));
    }
}
