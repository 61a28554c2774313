package io.rulesync.exec;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * nf_tables batches written as netlink messages on a netfilter socket, with no ruleset cache read first: what
 * {@code nft} 1.0.6 pays most of a second for on a large table costs the kernel a few milliseconds. It encodes only
 * what needs no expression compiler: chains added, flushed and deleted, sets deleted, and elements of sets and verdict
 * maps added and deleted (keys as the set stores them). Rules, which hold expressions, stay with {@code nft}.
 *
 * <p>One socket, opened and used on a {@link NetnsThread} in the network namespace given, so the agent's other threads
 * stay where they are. Not for concurrent use.
 */
public final class NftNetlink implements AutoCloseable {
    interface LibC extends Library {
        int close(int fd);

        int socket(int domain, int type, int protocol);

        int bind(int fd, byte[] address, int length);

        int setsockopt(int fd, int level, int option, byte[] value, int length);

        long send(int fd, byte[] buffer, long length, int flags);

        long recv(int fd, byte[] buffer, long length, int flags);
    }

    /** The address family of a table, as nf_tables numbers it. */
    public enum Family {
        IP(2),
        IP6(10);

        private final int number;

        Family(int number) {
            this.number = number;
        }
    }

    /** A verdict in a map element: {@code drop}, {@code accept}, or {@code goto}/{@code jump} to a chain. */
    public record Verdict(int code, String chain) {
        public static final Verdict DROP = new Verdict(0, null);
        public static final Verdict ACCEPT = new Verdict(1, null);

        public static Verdict jump(String chain) {
            return new Verdict(-3, Objects.requireNonNull(chain, "chain"));
        }

        public static Verdict goTo(String chain) {
            return new Verdict(-4, Objects.requireNonNull(chain, "chain"));
        }
    }

    /** One message of a batch, before its header is written. */
    public record Message(int type, int flags, Family family, byte[] attributes) {}

    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int NETLINK_NETFILTER = 12;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVTIMEO = 20;
    private static final int NFNL_SUBSYS_NFTABLES = 10;
    private static final int NFNL_MSG_BATCH_BEGIN = 0x10;
    private static final int NFNL_MSG_BATCH_END = 0x11;
    private static final int NLMSG_ERROR = 2;
    private static final int NLM_F_REQUEST = 0x1;
    private static final int NLM_F_ACK = 0x4;
    private static final int NLM_F_CREATE = 0x400;
    private static final int NLM_F_APPEND = 0x800;
    private static final int NLA_F_NESTED = 0x8000;
    /** A batch is sent whole in one datagram; bigger changes go to {@code nft} instead. */
    public static final int MAX_BATCH_BYTES = 60 * 1024;

    // Message types of nf_tables (uapi/linux/netfilter/nf_tables.h).
    private static final int NEWCHAIN = 3;
    private static final int DELCHAIN = 5;
    private static final int NEWRULE = 6;
    private static final int DELRULE = 8;
    private static final int DELSET = 11;
    private static final int NEWSETELEM = 12;
    private static final int DELSETELEM = 14;

    private final NetnsThread thread;
    private final LibC libc;
    private final int fd;
    private int seq = (int) (System.nanoTime() & 0x3fffffff);

    /**
     * A netlink socket in network namespace {@code netns} (one of {@code ip netns}), or the process's own when null.
     *
     * @throws IllegalStateException when the socket cannot be opened (no JNA library, no permission)
     */
    public NftNetlink(String netns) {
        NetnsThread entered = null;
        try {
            entered = new NetnsThread("nft-netlink", netns);
            libc = Native.load("c", LibC.class);
            fd = entered.call(() -> {
                int s = libc.socket(AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
                byte[] address = new byte[12];
                address[0] = AF_NETLINK;
                if (s < 0 || libc.bind(s, address, address.length) != 0) {
                    throw new IllegalStateException("cannot open a netfilter netlink socket");
                }
                // An answer that never comes must not hang the agent: 30 s, as a timeval.
                byte[] timeout = ByteBuffer.allocate(16)
                        .order(ByteOrder.nativeOrder())
                        .putLong(30)
                        .putLong(0)
                        .array();
                libc.setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, timeout, timeout.length);
                return s;
            });
        } catch (LinkageError | RuntimeException e) {
            // JNA's native part could not load (no writable temporary directory, say): the caller falls back to nft.
            if (entered != null) {
                entered.close();
            }
            throw new IllegalStateException("netlink: " + e.getMessage(), e);
        }
        thread = entered;
    }

    /** {@code add chain}: a regular chain, no hook. */
    public static Message addChain(Family family, String table, String chain) {
        return new Message(
                NEWCHAIN,
                NLM_F_CREATE,
                family,
                new Attrs().string(1, table).string(3, chain).bytes());
    }

    /** {@code flush chain}: every rule of the chain deleted. */
    public static Message flushChain(Family family, String table, String chain) {
        return new Message(
                DELRULE,
                0,
                family,
                new Attrs().string(1, table).string(2, chain).bytes());
    }

    public static Message deleteChain(Family family, String table, String chain) {
        return new Message(
                DELCHAIN,
                0,
                family,
                new Attrs().string(1, table).string(3, chain).bytes());
    }

    public static Message deleteSet(Family family, String table, String set) {
        return new Message(
                DELSET, 0, family, new Attrs().string(1, table).string(2, set).bytes());
    }

    /** {@code add element TABLE SET { KEY [: VERDICT] }}; the key as the set stores it (see {@link Key}). */
    public static Message addElement(Family family, String table, String set, byte[] key, Verdict verdict) {
        return addElement(family, table, set, key, null, verdict);
    }

    /** {@code add element TABLE SET { KEY comment "COMMENT" [: VERDICT] }}, the comment kept as {@code nft} keeps it. */
    public static Message addElement(
            Family family, String table, String set, byte[] key, String comment, Verdict verdict) {
        return new Message(NEWSETELEM, NLM_F_CREATE, family, element(table, set, key, comment, verdict));
    }

    public static Message deleteElement(Family family, String table, String set, byte[] key) {
        return new Message(DELSETELEM, 0, family, element(table, set, key, null, null));
    }

    /** {@code add rule TABLE CHAIN counter}: a rule the benchmarks can write without an expression compiler. */
    public static Message addCounterRule(Family family, String table, String chain) {
        byte[] counter = new Attrs().u64(1, 0).u64(2, 0).bytes(); // NFTA_COUNTER_BYTES, _PACKETS
        byte[] expression = new Attrs().string(1, "counter").nested(2, counter).bytes(); // NFTA_EXPR_NAME, _DATA
        byte[] list = new Attrs().nested(1, expression).bytes(); // NFTA_LIST_ELEM
        return new Message(
                NEWRULE,
                NLM_F_CREATE | NLM_F_APPEND,
                family,
                new Attrs().string(1, table).string(2, chain).nested(4, list).bytes()); // _TABLE, _CHAIN, _EXPRESSIONS
    }

    /** Set keys as nf_tables stores them: each field of a concatenation in registers of 4 bytes, network byte order. */
    public static final class Key {
        private final ByteBuffer buf = ByteBuffer.allocate(64);

        public Key address(byte[] address) {
            return field(address);
        }

        public Key protocol(int number) {
            return field(new byte[] {(byte) number});
        }

        public Key port(int port) {
            return field(new byte[] {(byte) (port >> 8), (byte) port});
        }

        private Key field(byte[] value) {
            buf.put(value).put(new byte[(4 - value.length % 4) % 4]);
            return this;
        }

        public byte[] bytes() {
            byte[] out = new byte[buf.position()];
            buf.duplicate().flip().get(out);
            return out;
        }
    }

    private static byte[] element(String table, String set, byte[] key, String comment, Verdict verdict) {
        Attrs elem = new Attrs().nested(1, new Attrs().raw(1, key).bytes()); // NFTA_SET_ELEM_KEY { NFTA_DATA_VALUE }
        if (verdict != null) {
            Attrs v = new Attrs().be32(1, verdict.code()); // NFTA_VERDICT_CODE
            if (verdict.chain() != null) {
                v.string(2, verdict.chain()); // NFTA_VERDICT_CHAIN
            }
            elem.nested(
                    2, new Attrs().nested(2, v.bytes()).bytes()); // NFTA_SET_ELEM_DATA { NFTA_DATA_VERDICT { ... } }
        }
        if (comment != null) {
            // NFTA_SET_ELEM_USERDATA: libnftnl's TLV, NFTNL_UDATA_SET_ELEM_COMMENT (0), length, the text and its NUL.
            byte[] text = comment.getBytes(StandardCharsets.UTF_8);
            if (text.length > 127) {
                throw new IllegalArgumentException(
                        "an element comment of " + text.length + " bytes; nft keeps at most 127");
            }
            byte[] udata = new byte[text.length + 3];
            udata[1] = (byte) (text.length + 1);
            System.arraycopy(text, 0, udata, 2, text.length);
            elem.raw(6, udata);
        }
        byte[] elements = new Attrs().nested(1, elem.bytes()).bytes(); // NFTA_LIST_ELEM
        return new Attrs().string(1, table).string(2, set).nested(3, elements).bytes(); // _TABLE, _SET, _ELEMENTS
    }

    /** The size of {@code messages} as one batch, to tell whether {@link #run} can send it. */
    public static int size(List<Message> messages) {
        int n = 2 * 20;
        for (Message m : messages) {
            n += 20 + m.attributes().length;
        }
        return n;
    }

    /**
     * Sends the messages as one transaction and waits for the kernel's answer to each: all of them happen or none.
     *
     * @throws IllegalStateException naming the refused message's place and the kernel's errno
     */
    public void run(List<Message> messages) {
        if (size(messages) > MAX_BATCH_BYTES) {
            throw new IllegalArgumentException("a batch of " + size(messages) + " bytes; at most " + MAX_BATCH_BYTES);
        }
        thread.call(() -> {
            ByteBuffer out = ByteBuffer.allocate(MAX_BATCH_BYTES + 64).order(ByteOrder.nativeOrder());
            header(out, NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, 0, new byte[0]);
            int first = seq; // the first message's sequence number
            for (Message m : messages) {
                header(
                        out,
                        (NFNL_SUBSYS_NFTABLES << 8) | m.type(),
                        NLM_F_REQUEST | NLM_F_ACK | m.flags(),
                        m.family().number,
                        m.attributes());
            }
            header(out, NFNL_MSG_BATCH_END, NLM_F_REQUEST, 0, new byte[0]);
            byte[] batch = new byte[out.position()];
            out.flip().get(batch);
            if (libc.send(fd, batch, batch.length, 0) != batch.length) {
                throw new IllegalStateException("netlink send failed: errno " + Native.getLastError());
            }
            List<Integer> pending = new ArrayList<>();
            for (int i = 0; i < messages.size(); i++) {
                pending.add(first + i);
            }
            byte[] in = new byte[64 * 1024];
            while (!pending.isEmpty()) {
                long n = libc.recv(fd, in, in.length, 0);
                if (n <= 0) {
                    throw new IllegalStateException("netlink recv failed: errno " + Native.getLastError());
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
                            throw new IllegalStateException("nf_tables refused message " + (s - first + 1) + " of "
                                    + messages.size() + ": errno " + -error);
                        }
                        pending.remove(Integer.valueOf(s));
                    }
                    if (len < 16) {
                        break;
                    }
                    b.position(Math.min(b.limit(), start + ((len + 3) & ~3)));
                }
            }
            return null;
        });
    }

    private void header(ByteBuffer out, int type, int flags, int family, byte[] attributes) {
        int len = 16 + 4 + attributes.length;
        out.putInt(len)
                .putShort((short) type)
                .putShort((short) flags)
                .putInt(seq++)
                .putInt(0);
        // nfgenmsg: family, version 0, res_id (the subsystem, big-endian, in the batch messages).
        out.put((byte) family).put((byte) 0);
        int resId = type == NFNL_MSG_BATCH_BEGIN || type == NFNL_MSG_BATCH_END ? NFNL_SUBSYS_NFTABLES : 0;
        out.put((byte) (resId >> 8)).put((byte) resId);
        out.put(attributes);
    }

    @Override
    public void close() {
        try {
            thread.call(() -> libc.close(fd));
        } finally {
            thread.close();
        }
    }

    /** Netlink attributes: type-length-value, each padded to 4 bytes, lengths in host order, values as the kernel wants them. */
    private static final class Attrs {
        private ByteBuffer buf = ByteBuffer.allocate(256).order(ByteOrder.nativeOrder());

        Attrs raw(int type, byte[] value) {
            int need = 4 + value.length + 3;
            if (buf.remaining() < need) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + need))
                        .order(ByteOrder.nativeOrder());
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
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
