package io.rulesync.compiler.bench;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * nf_tables batches written as netlink messages directly, with no ruleset cache in between: the third way to change a
 * table that {@code bench/nft-apply} measures, beside {@code nft -f} and libnftables. It encodes only what the bench
 * sends (an element of a set or verdict map, an empty chain, a rule holding one counter), enough to time what the
 * kernel itself costs for a change in a large table. Its socket is opened on a thread that entered the lab's network
 * namespace, as {@link LibNftables} does.
 */
final class NftNetlink implements AutoCloseable {
    interface LibC extends Library {
        int open(String path, int flags);

        int setns(int fd, int nstype);

        int close(int fd);

        int socket(int domain, int type, int protocol);

        int bind(int fd, byte[] address, int length);

        long send(int fd, byte[] buffer, long length, int flags);

        long recv(int fd, byte[] buffer, long length, int flags);
    }

    private static final int CLONE_NEWNET = 0x40000000;
    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int NETLINK_NETFILTER = 12;
    private static final int NFNL_SUBSYS_NFTABLES = 10;
    private static final int NFNL_MSG_BATCH_BEGIN = 0x10;
    private static final int NFNL_MSG_BATCH_END = 0x11;
    private static final int NLMSG_ERROR = 2;
    private static final int NLM_F_REQUEST = 0x1;
    private static final int NLM_F_ACK = 0x4;
    private static final int NLM_F_CREATE = 0x400;
    private static final int NLM_F_APPEND = 0x800;
    private static final int NLA_F_NESTED = 0x8000;
    private static final int NFPROTO_IPV4 = 2;

    // Message types of nf_tables (uapi/linux/netfilter/nf_tables.h).
    private static final int NEWCHAIN = 3;
    private static final int DELCHAIN = 5;
    private static final int NEWRULE = 6;
    private static final int NEWSETELEM = 12;
    private static final int DELSETELEM = 14;

    /** One message of a batch, before its header is written. */
    record Message(int type, int flags, byte[] attributes) {
    }

    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> new Thread(r, "nf-netlink"));
    private final LibC libc;
    private final int fd;
    private int seq = (int) (System.nanoTime() & 0x7fffffff);

    /** A netlink socket in network namespace {@code ns} (one of {@code ip netns}). */
    NftNetlink(String ns) throws Exception {
        libc = Native.load("c", LibC.class);
        fd = on(() -> {
            int nsFd = libc.open("/var/run/netns/" + ns, 0);
            if (nsFd < 0 || libc.setns(nsFd, CLONE_NEWNET) != 0) {
                throw new IllegalStateException("cannot enter network namespace " + ns);
            }
            libc.close(nsFd);
            int s = libc.socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
            byte[] address = new byte[12];
            address[0] = AF_NETLINK;
            if (s < 0 || libc.bind(s, address, address.length) != 0) {
                throw new IllegalStateException("cannot open a netfilter netlink socket");
            }
            return s;
        });
    }

    /** {@code add element ip TABLE SET { KEY }}, or with {@code : drop} when {@code verdictDrop}; the key as the set stores it. */
    static Message addElement(String table, String set, byte[] key, boolean verdictDrop) {
        return new Message(NEWSETELEM, NLM_F_CREATE, element(table, set, key, verdictDrop));
    }

    static Message deleteElement(String table, String set, byte[] key) {
        return new Message(DELSETELEM, 0, element(table, set, key, false));
    }

    static Message addChain(String table, String chain) {
        return new Message(NEWCHAIN, NLM_F_CREATE, new Attrs().string(1, table).string(3, chain).bytes());
    }

    static Message deleteChain(String table, String chain) {
        return new Message(DELCHAIN, 0, new Attrs().string(1, table).string(3, chain).bytes());
    }

    /** {@code add rule ip TABLE CHAIN counter}. */
    static Message addCounterRule(String table, String chain) {
        byte[] counter = new Attrs().u64(1, 0).u64(2, 0).bytes(); // NFTA_COUNTER_BYTES, _PACKETS
        byte[] expression = new Attrs().string(1, "counter").nested(2, counter).bytes(); // NFTA_EXPR_NAME, _DATA
        byte[] list = new Attrs().nested(1, expression).bytes(); // NFTA_LIST_ELEM
        return new Message(NEWRULE, NLM_F_CREATE | NLM_F_APPEND,
                new Attrs().string(1, table).string(2, chain).nested(4, list).bytes()); // _TABLE, _CHAIN, _EXPRESSIONS
    }

    /** An IPv4 address, a protocol and a port as a concatenated set key stores them: each field in a 4-byte register. */
    static byte[] addressProtocolPort(byte[] ipv4, int protocol, int port) {
        return ByteBuffer.allocate(12).put(ipv4).put((byte) protocol).put(new byte[3])
                .put((byte) (port >> 8)).put((byte) port).put(new byte[2]).array();
    }

    private static byte[] element(String table, String set, byte[] key, boolean verdictDrop) {
        Attrs elem = new Attrs().nested(1, new Attrs().raw(1, key).bytes()); // NFTA_SET_ELEM_KEY { NFTA_DATA_VALUE }
        if (verdictDrop) {
            // NFTA_SET_ELEM_DATA { NFTA_DATA_VERDICT { NFTA_VERDICT_CODE = NF_DROP } }
            elem.nested(2, new Attrs().nested(2, new Attrs().be32(1, 0).bytes()).bytes());
        }
        byte[] elements = new Attrs().nested(1, elem.bytes()).bytes(); // NFTA_LIST_ELEM
        return new Attrs().string(1, table).string(2, set).nested(3, elements).bytes(); // _TABLE, _SET, _ELEMENTS
    }

    /** Sends the messages as one transaction and waits for the kernel's answer to each; throws with the errno of a refusal. */
    void run(List<Message> messages) throws Exception {
        on(() -> {
            ByteBuffer out = ByteBuffer.allocate(64 * 1024).order(ByteOrder.nativeOrder());
            header(out, NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, 0, new byte[0]);
            int first = seq; // the first message's sequence number
            for (Message m : messages) {
                header(out, (NFNL_SUBSYS_NFTABLES << 8) | m.type(), NLM_F_REQUEST | NLM_F_ACK | m.flags(), NFPROTO_IPV4, m.attributes());
            }
            header(out, NFNL_MSG_BATCH_END, NLM_F_REQUEST, 0, new byte[0]);
            byte[] batch = new byte[out.position()];
            out.flip().get(batch);
            if (libc.send(fd, batch, batch.length, 0) != batch.length) {
                throw new IllegalStateException("netlink send failed");
            }
            List<Integer> pending = new ArrayList<>();
            for (int i = 0; i < messages.size(); i++) {
                pending.add(first + i);
            }
            byte[] in = new byte[64 * 1024];
            while (!pending.isEmpty()) {
                long n = libc.recv(fd, in, in.length, 0);
                if (n <= 0) {
                    throw new IllegalStateException("netlink recv failed");
                }
                ByteBuffer b = ByteBuffer.wrap(in, 0, (int) n).order(ByteOrder.nativeOrder());
                while (b.remaining() >= 16) {
                    int start = b.position();
                    int len = b.getInt();
                    int type = b.getShort() & 0xffff;
                    b.getShort();
                    int s = b.getInt();
                    b.getInt();
                    if (type == NLMSG_ERROR) {
                        int error = b.getInt();
                        if (error != 0) {
                            throw new IllegalStateException("nf_tables refused message " + (s - first) + ": errno " + -error);
                        }
                        pending.remove(Integer.valueOf(s));
                    }
                    b.position(start + ((len + 3) & ~3));
                }
            }
            return null;
        });
    }

    private void header(ByteBuffer out, int type, int flags, int family, byte[] attributes) {
        int len = 16 + 4 + attributes.length;
        out.putInt(len).putShort((short) type).putShort((short) flags).putInt(seq++).putInt(0);
        // nfgenmsg: family, version 0, res_id (the subsystem, big-endian, in the batch messages).
        out.put((byte) family).put((byte) 0);
        int resId = type == NFNL_MSG_BATCH_BEGIN || type == NFNL_MSG_BATCH_END ? NFNL_SUBSYS_NFTABLES : 0;
        out.put((byte) (resId >> 8)).put((byte) resId);
        out.put(attributes);
    }

    private <T> T on(Callable<T> call) throws Exception {
        return thread.submit(call).get();
    }

    @Override
    public void close() throws Exception {
        on(() -> libc.close(fd));
        thread.shutdown();
    }

    /** Netlink attributes: type-length-value, each padded to 4 bytes, lengths in host order, values as the kernel wants them. */
    private static final class Attrs {
        private final ByteBuffer buf = ByteBuffer.allocate(4096).order(ByteOrder.nativeOrder());

        Attrs raw(int type, byte[] value) {
            buf.putShort((short) (4 + value.length)).putShort((short) type).put(value);
            buf.position(buf.position() + ((4 - value.length % 4) % 4));
            return this;
        }

        Attrs string(int type, String value) {
            byte[] s = value.getBytes(StandardCharsets.US_ASCII);
            byte[] z = new byte[s.length + 1];
            System.arraycopy(s, 0, z, 0, s.length);
            return raw(type, z);
        }

        Attrs be32(int type, int value) {
            return raw(type, ByteBuffer.allocate(4).putInt(value).array());
        }

        Attrs u64(int type, long value) {
            return raw(type, ByteBuffer.allocate(8).putLong(value).array());
        }

        Attrs nested(int type, byte[] inner) {
            return raw(type | NLA_F_NESTED, inner);
        }

        byte[] bytes() {
            byte[] out = new byte[buf.position()];
            buf.duplicate().flip().get(out);
            return out;
        }
    }
}
