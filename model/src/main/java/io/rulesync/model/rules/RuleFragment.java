package io.rulesync.model.rules;

import io.rulesync.model.ipvs.IpvsPart;
import io.rulesync.model.nftables.NftPart;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one unit contributes to a node's rules: rules appended to the shared dispatch chains, and
 * chains it owns outright. A unit is one service port (it owns its KUBE-EXT/FW/SVC/SVL/SEP chains),
 * or a node's fixed part (it owns KUBE-FORWARD, KUBE-POSTROUTING, KUBE-MARK-MASQ, KUBE-FIREWALL and
 * appends the last KUBE-SERVICES rule).
 *
 * <p>Fragments are the unit of storage and of change: a version of a cluster is a map from units to
 * fragments, stored once by content hash. {@link #text()} is their canonical, human-readable form
 * (iptables-restore syntax per table), and {@link #parse} reads it back.
 *
 * <p>A fragment also carries what the unit contributes in IPVS mode ({@link #ipvs()}, an
 * {@code *ipvs} section of the text) and in nftables mode ({@link #nftables()}, an {@code *nftables} section
 * after it), so all modes share versions, deltas and node classes; an agent uses the part of its mode.
 */
public final class RuleFragment {
    public static final RuleFragment EMPTY = new RuleFragment(Map.of(), List.of(), List.of());
    private static final String IPVS_SECTION = "*ipvs";
    private static final String NFT_SECTION = "*nftables";

    private final Map<DispatchChain, List<String>> appends;
    private final List<Chain> filterChains;
    private final List<Chain> natChains;
    private final IpvsPart ipvs;
    private final NftPart nftables;
    // Derived and immutable, so computed once: a fragment is rendered, hashed and stored many times.
    private String text;
    private String hash;

    public RuleFragment(Map<DispatchChain, List<String>> appends, List<Chain> filterChains, List<Chain> natChains) {
        this(appends, filterChains, natChains, IpvsPart.EMPTY, NftPart.NONE);
    }

    public RuleFragment(
            Map<DispatchChain, List<String>> appends,
            List<Chain> filterChains,
            List<Chain> natChains,
            IpvsPart ipvs,
            NftPart nftables) {
        EnumMap<DispatchChain, List<String>> copy = new EnumMap<>(DispatchChain.class);
        appends.forEach((k, v) -> {
            if (!v.isEmpty()) {
                copy.put(k, List.copyOf(v));
            }
        });
        this.appends = Collections.unmodifiableMap(copy);
        this.filterChains = List.copyOf(filterChains);
        this.natChains = List.copyOf(natChains);
        this.ipvs = Objects.requireNonNull(ipvs, "ipvs");
        this.nftables = Objects.requireNonNull(nftables, "nftables");
    }

    /** The same iptables rules and nftables part with this IPVS part. */
    public RuleFragment withIpvs(IpvsPart part) {
        return new RuleFragment(appends, filterChains, natChains, part, nftables);
    }

    /** The same iptables rules and IPVS part with this nftables part. */
    public RuleFragment withNftables(NftPart part) {
        return new RuleFragment(appends, filterChains, natChains, ipvs, part);
    }

    /** What the unit contributes in nftables mode; {@link NftPart#NONE} for fragments written before nftables mode. */
    public NftPart nftables() {
        return nftables;
    }

    /** What the unit contributes in IPVS mode; empty for fragments written before IPVS mode. */
    public IpvsPart ipvs() {
        return ipvs;
    }

    public Map<DispatchChain, List<String>> appends() {
        return appends;
    }

    public List<Chain> filterChains() {
        return filterChains;
    }

    public List<Chain> natChains() {
        return natChains;
    }

    @Override
    public boolean equals(Object o) {
        if (o == this) {
            return true;
        }
        return o instanceof RuleFragment f
                && appends.equals(f.appends)
                && filterChains.equals(f.filterChains)
                && natChains.equals(f.natChains)
                && ipvs.equals(f.ipvs)
                && nftables.equals(f.nftables);
    }

    @Override
    public int hashCode() {
        return (((appends.hashCode() * 31 + filterChains.hashCode()) * 31 + natChains.hashCode()) * 31
                                + ipvs.hashCode())
                        * 31
                + nftables.hashCode();
    }

    @Override
    public String toString() {
        return "RuleFragment[" + hash().substring(0, 12) + "]";
    }

    public List<String> appended(DispatchChain chain) {
        return appends.getOrDefault(chain, List.of());
    }

    public List<Chain> chains(Table table) {
        return table == Table.FILTER ? filterChains : natChains;
    }

    /**
     * Canonical text: per table that has content, {@code *table}, the owned chains' declarations,
     * then the appended rules and the owned chains' rules as {@code -A} lines; last, when the unit
     * has an IPVS part, {@code *ipvs} and its lines; then, when it has an nftables part, {@code *nftables} and its lines.
     */
    public String text() {
        String t = text;
        if (t == null) {
            t = render();
            text = t;
        }
        return t;
    }

    private String render() {
        StringBuilder sb = new StringBuilder();
        render(sb);
        return sb.toString();
    }

    private void render(StringBuilder sb) {
        for (Table t : Table.values()) {
            List<Chain> owned = chains(t);
            boolean any = !owned.isEmpty();
            for (DispatchChain d : DispatchChain.values()) {
                any |= d.table() == t && appends.containsKey(d);
            }
            if (!any) {
                continue;
            }
            sb.append('*').append(t.restoreName()).append('\n');
            for (Chain c : owned) {
                sb.append(':').append(c.name()).append('\n');
            }
            for (DispatchChain d : DispatchChain.values()) {
                if (d.table() == t) {
                    for (String r : appended(d)) {
                        sb.append("-A ").append(d.chain()).append(' ').append(r).append('\n');
                    }
                }
            }
            for (Chain c : owned) {
                for (String r : c.rules()) {
                    sb.append("-A ").append(c.name()).append(' ').append(r).append('\n');
                }
            }
        }
        if (!ipvs.isEmpty()) {
            sb.append(IPVS_SECTION).append('\n');
            ipvs.lines().forEach(l -> sb.append(l).append('\n'));
        }
        if (nftables != NftPart.NONE) {
            sb.append(NFT_SECTION).append('\n');
            nftables.lines().forEach(l -> sb.append(l).append('\n'));
        }
    }

    /** SHA-256 of {@link #text()}, hex: the fragment's identity in storage. */
    public String hash() {
        String h = hash;
        if (h != null) {
            return h;
        }
        h = hash(sha256(), text());
        hash = h;
        return h;
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    }

    private static String hash(MessageDigest sha, String text) {
        return HexFormat.of().formatHex(sha.digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * Whether {@code text}, which this fragment was parsed from, is its {@link #text()} and hashes to
     * {@code hash}; if so, keeps the hash. Exactly when {@code hash().equals(hash)} would be true (a
     * text with its own hash that is not canonical still fails), but cheaper: {@code sha} and
     * {@code scratch} are reused over a whole snapshot, and the canonical form is compared in place
     * rather than built as a string. The text is not kept: a read snapshot would hold its rules twice.
     */
    boolean isReceivedAs(String text, String hash, MessageDigest sha, StringBuilder scratch) {
        if (this.hash != null || !hash.equals(hash(sha, text))) {
            return hash().equals(hash);
        }
        scratch.setLength(0);
        render(scratch);
        if (!text.contentEquals(scratch)) {
            return hash().equals(hash);
        }
        this.hash = hash;
        return true;
    }

    /** Reads {@link #text()} back; throws {@link IllegalArgumentException} on anything else. */
    public static RuleFragment parse(String text) {
        Objects.requireNonNull(text, "text");
        Map<DispatchChain, List<String>> appends = new EnumMap<>(DispatchChain.class);
        Map<Table, Map<String, List<String>>> owned = new EnumMap<>(Table.class);
        Table table = null;
        int lineNo = 0;
        IpvsPart ipvs = IpvsPart.EMPTY;
        NftPart nftables = NftPart.NONE;
        // A chain's rules are consecutive lines: the chain of the last rule and where its rules go
        // spare most lines a substring and two lookups. Any other line forgets it.
        String lastChain = null;
        List<String> lastRules = null;
        // Line by line as String.split("\n", -1) would cut them (a snapshot holds 10k fragments):
        // a text ending in a line break has an empty last line.
        int end = text.length();
        for (int start = 0, stop; start <= end; start = stop + 1) {
            stop = text.indexOf('\n', start);
            if (stop < 0) {
                stop = end;
            }
            lineNo++;
            if (stop == start) {
                continue;
            }
            boolean ipvsSection = stop - start == IPVS_SECTION.length() && text.startsWith(IPVS_SECTION, start);
            if (ipvsSection || stop - start == NFT_SECTION.length() && text.startsWith(NFT_SECTION, start)) {
                // The last sections: the IPVS part, then the nftables part.
                List<String> ipvsLines = new ArrayList<>();
                List<String> nftLines = new ArrayList<>();
                List<String> into = ipvsSection ? ipvsLines : nftLines;
                boolean nftSection = !ipvsSection;
                int nftLineNo = lineNo + 1;
                int here = lineNo;
                for (int from = stop + 1, to; from <= end; from = to + 1) {
                    to = text.indexOf('\n', from);
                    if (to < 0) {
                        to = end;
                    }
                    here++;
                    if (to == from) {
                        continue;
                    }
                    String line = text.substring(from, to);
                    if (line.equals(NFT_SECTION) && into == ipvsLines) {
                        into = nftLines;
                        nftSection = true;
                        nftLineNo = here + 1;
                    } else {
                        into.add(line);
                    }
                }
                if (ipvsSection) {
                    ipvs = IpvsPart.parse(ipvsLines, lineNo + 1);
                }
                nftables = NftPart.parse(nftLines, nftLineNo);
                if (nftSection && nftLines.isEmpty()) {
                    throw new IllegalArgumentException("line " + nftLineNo + ": an empty nftables section");
                }
                break;
            }
            char first = text.charAt(start);
            if (first == '-' && table != null && text.startsWith("-A ", start)) {
                int space = text.indexOf(' ', start + 3);
                if (space < 0 || space > stop) {
                    throw new IllegalArgumentException("line " + lineNo + ": rule without a body");
                }
                String rule = text.substring(space + 1, stop);
                int nameLength = space - start - 3;
                if (lastChain != null && lastChain.length() == nameLength && text.startsWith(lastChain, start + 3)) {
                    lastRules.add(rule);
                    continue;
                }
                String chain = text.substring(start + 3, space);
                List<String> ownedRules = owned.get(table).get(chain);
                DispatchChain d = DispatchChain.of(table, chain);
                if (ownedRules != null) {
                    lastRules = ownedRules;
                } else if (d != null) {
                    lastRules = appends.computeIfAbsent(d, k -> new ArrayList<>());
                } else {
                    throw new IllegalArgumentException("line " + lineNo + ": rule for undeclared chain " + chain);
                }
                lastChain = chain;
                lastRules.add(rule);
                continue;
            }
            lastChain = null;
            lastRules = null;
            if (first == '*') {
                table = tableNamed(text.substring(start + 1, stop), lineNo);
                owned.computeIfAbsent(table, k -> new LinkedHashMap<>());
            } else if (table == null) {
                throw new IllegalArgumentException("line " + lineNo + ": rule outside a table");
            } else if (first == ':') {
                String name = text.substring(start + 1, stop);
                if (owned.get(table).putIfAbsent(name, new ArrayList<>()) != null) {
                    throw new IllegalArgumentException("line " + lineNo + ": chain " + name + " declared twice");
                }
            } else {
                throw new IllegalArgumentException(
                        "line " + lineNo + ": unexpected '" + text.substring(start, stop) + "'");
            }
        }
        List<Chain> filter = new ArrayList<>();
        List<Chain> nat = new ArrayList<>();
        owned.forEach((t, chains) ->
                chains.forEach((name, rules) -> (t == Table.FILTER ? filter : nat).add(new Chain(name, rules))));
        return new RuleFragment(appends, filter, nat, ipvs, nftables);
    }

    private static Table tableNamed(String name, int lineNo) {
        for (Table t : Table.values()) {
            if (t.restoreName().equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("line " + lineNo + ": unknown table " + name);
    }
}
