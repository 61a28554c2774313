package io.rulesync.model.nftables;

import java.util.List;

/**
 * One line of an {@code nft -f} transaction on kube-proxy's table, as kube-proxy's knftables library writes it. The
 * compiler builds these and renders them once ({@link NftTransaction#render()}); every value in them comes from a
 * validated model value (names, canonical addresses, numbers), never from raw input.
 */
public sealed interface NftOp {
    /** The text after {@code add|flush ... ip kube-proxy}. */
    String render(String family);

    /** {@code add table ip kube-proxy { comment "rules for kube-proxy" ; }} */
    record AddTable() implements NftOp {
        @Override
        public String render(String family) {
            return "add table " + family + " " + NftTransaction.TABLE + " { comment \"rules for kube-proxy\" ; }";
        }
    }

    /** A chain; a base chain has its type, hook and priority. */
    record AddChain(String name, BaseChain base, String comment) implements NftOp {
        public AddChain(String name) {
            this(name, null, null);
        }

        @Override
        public String render(String family) {
            String head = "add chain " + family + " " + NftTransaction.TABLE + " " + name;
            if (base != null) {
                return head + " { type " + base.type() + " hook " + base.hook() + " priority " + base.priority()
                        + " ; }";
            }
            return comment == null ? head : head + " { comment \"" + comment + "\" ; }";
        }
    }

    /** Empties a chain, so that a full transaction rewrites it whole. */
    record FlushChain(String name) implements NftOp {
        @Override
        public String render(String family) {
            return "flush chain " + family + " " + NftTransaction.TABLE + " " + name;
        }
    }

    record AddRule(String chain, String rule) implements NftOp {
        @Override
        public String render(String family) {
            return "add rule " + family + " " + NftTransaction.TABLE + " " + chain + " " + rule;
        }
    }

    /** A set ({@code type} such as {@code ipv4_addr}); {@code flags} and {@code timeoutSeconds} (0: none) for affinity sets. */
    record AddSet(String name, String type, List<String> flags, int timeoutSeconds, String comment) implements NftOp {
        public AddSet {
            flags = List.copyOf(flags);
        }

        @Override
        public String render(String family) {
            StringBuilder b = new StringBuilder("add set ")
                    .append(family)
                    .append(' ')
                    .append(NftTransaction.TABLE)
                    .append(' ')
                    .append(name)
                    .append(" { type ")
                    .append(type)
                    .append(" ; ");
            if (!flags.isEmpty()) {
                b.append("flags ").append(String.join(",", flags)).append(" ; ");
            }
            if (timeoutSeconds > 0) {
                b.append("timeout ").append(timeoutSeconds).append("s ; ");
            }
            if (comment != null) {
                b.append("comment \"").append(comment).append("\" ; ");
            }
            return b.append('}').toString();
        }
    }

    /** A verdict map from {@code type} keys. */
    record AddMap(String name, String type, String comment) implements NftOp {
        @Override
        public String render(String family) {
            return "add map " + family + " " + NftTransaction.TABLE + " " + name + " { type " + type
                    + " : verdict ; comment \"" + comment + "\" ; }";
        }
    }

    record FlushSet(String name) implements NftOp {
        @Override
        public String render(String family) {
            return "flush set " + family + " " + NftTransaction.TABLE + " " + name;
        }
    }

    /** An element of a set ({@code value} null) or map: {@code key [comment "..."] [: value]}. */
    record AddElement(String set, String key, String comment, String value) implements NftOp {
        @Override
        public String render(String family) {
            return "add element " + family + " " + NftTransaction.TABLE + " " + set + " { " + key
                    + (comment == null ? "" : " comment \"" + comment + "\"") + (value == null ? "" : " : " + value)
                    + " }";
        }
    }

    /** Removes one element of a set or map: its key alone. */
    record DeleteElement(String set, String key) implements NftOp {
        @Override
        public String render(String family) {
            return "delete element " + family + " " + NftTransaction.TABLE + " " + set + " { " + key + " }";
        }
    }

    /** Removes a chain no rule or element refers to any more. */
    record DeleteChain(String name) implements NftOp {
        @Override
        public String render(String family) {
            return "delete chain " + family + " " + NftTransaction.TABLE + " " + name;
        }
    }

    /** Removes a set no rule refers to any more (an endpoint's affinity set). */
    record DeleteSet(String name) implements NftOp {
        @Override
        public String render(String family) {
            return "delete set " + family + " " + NftTransaction.TABLE + " " + name;
        }
    }

    /** A base chain's type, hook and priority (a number, as knftables writes it). */
    record BaseChain(String type, String hook, int priority) {}
}
