package io.rulesync.api.access;

import io.rulesync.model.cluster.KubernetesNames;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The configured api tokens, each a line {@code NAME ROLE sha256:HEX}, an agent's optionally followed by the scope it
 * is bound to: {@code cluster=ID} and {@code node=NAME} ({@link Scope}). Only the hash is configured:
 * a leaked configuration does not leak a usable token. A plain SHA-256 (no salt, no stretching) is
 * enough because tokens are 256 random bits, not passwords a dictionary could guess.
 */
public final class ApiTokens {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@-]{0,127}");
    private static final Pattern LINE = Pattern.compile("(\\S+)\\s+(\\S+)\\s+sha256:([0-9a-f]{64})((?:\\s+\\S+)*)");
    private static final String PREFIX = "rs_";
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * What an agent token may read: the snapshots of one cluster ({@code cluster}), and of one node of it ({@code node}),
     * or, unbound ({@link #ANY}), of every cluster. A node holding a bound token cannot read another cluster's rules.
     */
    public record Scope(String cluster, String node) {
        public static final Scope ANY = new Scope(null, null);

        public Scope {
            if (node != null && cluster == null) {
                throw new IllegalArgumentException("node=" + node + " needs cluster= too");
            }
            String p = cluster == null ? null : KubernetesNames.checkNamespace(cluster);
            if (p != null) {
                throw new IllegalArgumentException("cluster=" + KubernetesNames.printable(cluster) + ": " + p);
            }
            p = node == null ? null : KubernetesNames.checkSubdomain(node);
            if (p != null) {
                throw new IllegalArgumentException("node=" + KubernetesNames.printable(node) + ": " + p);
            }
        }

        public boolean bound() {
            return cluster != null;
        }

        /** The scope as the tokens file writes it after the hash: "" unbound, else {@code cluster=ID[ node=NAME]}. */
        public String line() {
            return cluster == null ? "" : " cluster=" + cluster + (node == null ? "" : " node=" + node);
        }
    }

    /**
     * Who a credential belongs to, (an agent's) what it is bound to, and when it stops being valid (null: when it is
     * revoked; a node's ServiceAccount token expires).
     */
    public record Caller(String name, Role role, Scope scope, Instant expires) {
        public Caller(String name, Role role, Scope scope) {
            this(name, role, scope, null);
        }

        public Caller(String name, Role role) {
            this(name, role, Scope.ANY);
        }

        /** Whether this credential may speak for {@code node} of {@code cluster}: only a credential bound to that node. */
        public boolean speaksFor(String cluster, String node) {
            return role == Role.AGENT && cluster.equals(scope.cluster()) && node.equals(scope.node());
        }
    }

    private record Entry(Caller caller, byte[] hash) {}

    /** A newly made token: give {@code token} to its user, put {@code line} in the api's configuration. */
    public record Issued(String token, String line) {}

    private final List<Entry> entries;
    /** By the hex of the token's hash: a lookup by hash tells a timing observer nothing about a token it does not hold. */
    private final Map<String, Caller> byHash;

    private ApiTokens(List<Entry> entries) {
        this.entries = List.copyOf(entries);
        this.byHash = new HashMap<>();
        entries.forEach(e -> byHash.put(HexFormat.of().formatHex(e.hash()), e.caller()));
    }

    /**
     * Reads token lines ({@code #} starts a comment; blank lines are skipped).
     *
     * @param source names where the lines came from, for error messages
     * @throws IllegalArgumentException naming the source, the line and what is wrong with it
     */
    public static ApiTokens parse(List<String> lines, String source) {
        List<Entry> entries = new ArrayList<>();
        Set<String> names = new HashSet<>();
        Set<String> hashes = new HashSet<>();
        int n = 0;
        for (String raw : lines) {
            n++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            var m = LINE.matcher(line);
            String where = source + " line " + n;
            if (!m.matches()) {
                throw new IllegalArgumentException(
                        where + ": expected 'NAME ROLE sha256:HEX' (64 lower-case hex digits), an agent's "
                                + "optionally followed by 'cluster=ID' and 'node=NAME'");
            }
            if (!NAME.matcher(m.group(1)).matches()) {
                throw new IllegalArgumentException(
                        where + ": name '" + m.group(1) + "' must be 1-128 letters, digits, '.', '_', '@' or '-'");
            }
            Role role;
            try {
                role = Role.parse(m.group(2));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
            if (!names.add(m.group(1))) {
                throw new IllegalArgumentException(where + ": name '" + m.group(1) + "' is configured twice");
            }
            if (!hashes.add(m.group(3))) {
                throw new IllegalArgumentException(where + ": the same token is configured twice");
            }
            Scope scope;
            try {
                scope = scope(m.group(4).strip(), role);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
            entries.add(new Entry(
                    new Caller(m.group(1), role, scope), HexFormat.of().parseHex(m.group(3))));
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException(source + ": no api tokens configured; every request needs one "
                    + "(make one with 'rulesync token --name NAME --role viewer|operator|agent')");
        }
        return new ApiTokens(entries);
    }

    /** The scope fields after a line's hash: {@code cluster=ID}, then optionally {@code node=NAME}; agents only. */
    private static Scope scope(String fields, Role role) {
        if (fields.isEmpty()) {
            return Scope.ANY;
        }
        if (role != Role.AGENT) {
            throw new IllegalArgumentException("only agent tokens are bound to a cluster or node; a " + role.id()
                    + " token's line ends with its hash");
        }
        String cluster = null;
        String node = null;
        for (String field : fields.split("\\s+")) {
            if (field.startsWith("cluster=") && cluster == null) {
                cluster = field.substring("cluster=".length());
            } else if (field.startsWith("node=") && node == null) {
                node = field.substring("node=".length());
            } else {
                throw new IllegalArgumentException("'" + KubernetesNames.printable(field)
                        + "' is not cluster=ID or node=NAME " + "(each at most once)");
            }
        }
        return new Scope(cluster, node);
    }

    /** The names of agent tokens bound to no cluster: a node holding one can read every cluster's rules. */
    public List<String> unboundAgents() {
        return entries.stream()
                .map(Entry::caller)
                .filter(c -> c.role() == Role.AGENT && !c.scope().bound())
                .map(Caller::name)
                .toList();
    }

    /**
     * Whose token this is; empty for a token nobody configured. The token is hashed first and the hash looked up: what a
     * lookup's time could reveal is a prefix of a SHA-256, which does not help anyone find a token.
     */
    public Optional<Caller> authenticate(String token) {
        return Optional.ofNullable(byHash.get(HexFormat.of().formatHex(sha256(token))));
    }

    /** The hash of a token as the tokens file writes it, without {@code sha256:}: how an open stream's credential is named. */
    public static String hash(String token) {
        return HexFormat.of().formatHex(sha256(token));
    }

    /** How many tokens are configured. */
    public int size() {
        return entries.size();
    }

    /** A fresh random token for {@code name} with {@code role}, bound to nothing. */
    public static Issued issue(String name, Role role) {
        return issue(name, role, Scope.ANY);
    }

    /** A fresh random token for {@code name} with {@code role} and (an agent's) {@code scope}. */
    public static Issued issue(String name, Role role, Scope scope) {
        if (scope.bound() && role != Role.AGENT) {
            throw new IllegalArgumentException(
                    "only agent tokens are bound to a cluster or node, not " + role.id() + " tokens");
        }
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "name '" + name + "' must be 1-128 letters, digits, '.', '_', '@' or '-'");
        }
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        String token = PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        return new Issued(
                token, name + " " + role.id() + " sha256:" + HexFormat.of().formatHex(sha256(token)) + scope.line());
    }

    private static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
