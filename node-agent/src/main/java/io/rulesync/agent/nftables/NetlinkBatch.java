package io.rulesync.agent.nftables;

import io.rulesync.exec.NftNetlink;
import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftOp;
import io.rulesync.model.nftables.NftTransaction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A transaction as netlink messages, when every operation in it needs no expression compiler: chains added (without
 * hooks or comments), flushed and deleted, sets deleted, and elements of the table's sets and verdict maps added and
 * deleted. A transaction that writes a rule, or anything else, is left to {@code nft}. Keys are encoded from the
 * set's declared type, field by field; a key or value of any other shape leaves the transaction to {@code nft}, which
 * says what is wrong with it.
 */
final class NetlinkBatch {
    private NetlinkBatch() {}

    /** The set and map types declared in {@code table}, by name. */
    static Map<String, String> setTypes(NftTransaction table) {
        Map<String, String> types = new HashMap<>();
        for (NftOp op : table.ops()) {
            if (op instanceof NftOp.AddSet s) {
                types.put(s.name(), s.type());
            } else if (op instanceof NftOp.AddMap m) {
                types.put(m.name(), m.type());
            }
        }
        return types;
    }

    /** The messages of {@code tx}, or empty when some operation is not one this encodes. */
    static Optional<List<NftNetlink.Message>> of(IpFamily family, NftTransaction tx, Map<String, String> setTypes) {
        NftNetlink.Family f = family == IpFamily.IPV4 ? NftNetlink.Family.IP : NftNetlink.Family.IP6;
        String table = NftTransaction.TABLE;
        List<NftNetlink.Message> out = new ArrayList<>(tx.ops().size());
        for (NftOp op : tx.ops()) {
            NftNetlink.Message m;
            if (op instanceof NftOp.AddChain c && c.base() == null && c.comment() == null) {
                m = NftNetlink.addChain(f, table, c.name());
            } else if (op instanceof NftOp.FlushChain c) {
                m = NftNetlink.flushChain(f, table, c.name());
            } else if (op instanceof NftOp.DeleteChain c) {
                m = NftNetlink.deleteChain(f, table, c.name());
            } else if (op instanceof NftOp.DeleteSet s) {
                m = NftNetlink.deleteSet(f, table, s.name());
            } else if (op instanceof NftOp.AddElement e) {
                Optional<byte[]> key = key(family, setTypes.get(e.set()), e.key());
                Optional<NftNetlink.Verdict> verdict = e.value() == null ? Optional.empty() : verdict(e.value());
                if (key.isEmpty() || e.value() != null && verdict.isEmpty()) {
                    return Optional.empty();
                }
                m = NftNetlink.addElement(f, table, e.set(), key.get(), e.comment(), verdict.orElse(null));
            } else if (op instanceof NftOp.DeleteElement e) {
                Optional<byte[]> key = key(family, setTypes.get(e.set()), e.key());
                if (key.isEmpty()) {
                    return Optional.empty();
                }
                m = NftNetlink.deleteElement(f, table, e.set(), key.get());
            } else {
                return Optional.empty();
            }
            out.add(m);
        }
        return NftNetlink.size(out) <= NftNetlink.MAX_BATCH_BYTES ? Optional.of(out) : Optional.empty();
    }

    /** A key such as {@code 10.0.0.1 . tcp . 80}, for a set of type {@code ipv4_addr . inet_proto . inet_service}. */
    static Optional<byte[]> key(IpFamily family, String type, String key) {
        if (type == null) {
            return Optional.empty();
        }
        String[] kinds = type.split(" \\. ", -1);
        String[] values = key.split(" \\. ", -1);
        if (kinds.length != values.length) {
            return Optional.empty();
        }
        NftNetlink.Key k = new NftNetlink.Key();
        for (int i = 0; i < kinds.length; i++) {
            String v = values[i];
            switch (kinds[i]) {
                case "ipv4_addr", "ipv6_addr" -> {
                    IpFamily wanted = kinds[i].equals("ipv4_addr") ? IpFamily.IPV4 : IpFamily.IPV6;
                    IpAddress ip;
                    try {
                        ip = IpAddress.parse(v);
                    } catch (IllegalArgumentException e) {
                        return Optional.empty();
                    }
                    if (ip.family() != wanted
                            || wanted != family
                            || !ip.toString().equals(v)) {
                        return Optional.empty();
                    }
                    k.address(ip.toBytes());
                }
                case "inet_proto" -> {
                    int number = switch (v) {
                        case "tcp" -> 6;
                        case "udp" -> 17;
                        case "sctp" -> 132;
                        default -> -1;
                    };
                    if (number < 0) {
                        return Optional.empty();
                    }
                    k.protocol(number);
                }
                case "inet_service" -> {
                    if (!v.matches("[1-9][0-9]{0,4}") || Integer.parseInt(v) > 65535) {
                        return Optional.empty();
                    }
                    k.port(Integer.parseInt(v));
                }
                default -> {
                    return Optional.empty();
                }
            }
        }
        return Optional.of(k.bytes());
    }

    private static Optional<NftNetlink.Verdict> verdict(String value) {
        if (value.equals("drop")) {
            return Optional.of(NftNetlink.Verdict.DROP);
        }
        if (value.equals("accept")) {
            return Optional.of(NftNetlink.Verdict.ACCEPT);
        }
        String[] words = value.split(" ", -1);
        if (words.length == 2 && (words[0].equals("goto") || words[0].equals("jump")) && !words[1].isEmpty()) {
            return Optional.of(
                    words[0].equals("goto") ? NftNetlink.Verdict.goTo(words[1]) : NftNetlink.Verdict.jump(words[1]));
        }
        return Optional.empty();
    }
}
