package io.rulesync.compiler.iptables;

import io.rulesync.model.rules.TopChains;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * kube-proxy's test normalisation of iptables-restore input ({@code sortIPTablesRules} in
 * proxier_test.go), so that our output can be compared with the expected outputs of kube-proxy's own
 * tests: tables by name; in each table KUBE-NODEPORTS, then KUBE-SERVICES, then other KUBE-* chains
 * by name, then the rest by name; each chain's rules follow its declaration in their original order,
 * except that KUBE-NODEPORTS and KUBE-SERVICES are stable-sorted by the service named in their
 * comment, with the "must be the last rule" rule kept last.
 */
final class KubeProxyDump {
    private KubeProxyDump() {}

    static String normalize(String restoreInput) {
        List<Table> tables = new ArrayList<>();
        Table current = null;
        for (String line : restoreInput.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            if (line.startsWith("*")) {
                current = new Table(line.substring(1));
                tables.add(current);
            } else if (current == null) {
                throw new IllegalArgumentException("line outside a table: " + line);
            } else if (line.equals("COMMIT")) {
                current = null;
            } else if (line.startsWith(":")) {
                String name = line.substring(1, line.indexOf(' ') < 0 ? line.length() : line.indexOf(' '));
                current.declarations.put(name, line);
                current.rules.computeIfAbsent(name, k -> new ArrayList<>());
            } else if (line.startsWith("-A ")) {
                String rest = line.substring(3);
                String name = rest.substring(0, rest.indexOf(' ') < 0 ? rest.length() : rest.indexOf(' '));
                current.rules.computeIfAbsent(name, k -> new ArrayList<>()).add(line);
            } else {
                current.other.add(line);
            }
        }
        tables.sort(Comparator.comparing(t -> t.name));
        StringBuilder sb = new StringBuilder();
        for (Table t : tables) {
            sb.append('*').append(t.name).append('\n');
            List<String> chains = new ArrayList<>(t.rules.keySet());
            chains.sort(KubeProxyDump::compareChains);
            for (String c : chains) {
                if (t.declarations.containsKey(c)) {
                    sb.append(t.declarations.get(c)).append('\n');
                }
            }
            for (String c : chains) {
                List<String> rules = new ArrayList<>(t.rules.get(c));
                if (c.equals(TopChains.SERVICES) || c.equals(TopChains.NODEPORTS)) {
                    rules.sort(Comparator.comparing((String r) -> r.contains("must be the last rule") ? 1 : 0)
                            .thenComparing(KubeProxyDump::serviceOfComment));
                }
                rules.forEach(r -> sb.append(r).append('\n'));
            }
            t.other.forEach(l -> sb.append(l).append('\n'));
            sb.append("COMMIT\n");
        }
        return sb.toString();
    }

    private static int compareChains(String a, String b) {
        return Integer.compare(rank(a), rank(b)) != 0 ? Integer.compare(rank(a), rank(b)) : a.compareTo(b);
    }

    private static int rank(String chain) {
        if (chain.equals(TopChains.NODEPORTS)) {
            return 0;
        }
        if (chain.equals(TopChains.SERVICES)) {
            return 1;
        }
        return chain.startsWith("KUBE-") ? 2 : 3;
    }

    /** The service a rule's comment names: its text up to the first space or colon. */
    static String serviceOfComment(String rule) {
        int i = rule.indexOf("--comment ");
        if (i < 0) {
            return "";
        }
        String c = rule.substring(i + "--comment ".length());
        if (c.startsWith("\"")) {
            c = c.substring(1, c.indexOf('"', 1) < 0 ? c.length() : c.indexOf('"', 1));
        } else if (c.indexOf(' ') >= 0) {
            c = c.substring(0, c.indexOf(' '));
        }
        int end = c.length();
        for (char stop : new char[] {' ', ':'}) {
            int k = c.indexOf(stop);
            if (k >= 0 && k < end) {
                end = k;
            }
        }
        return c.substring(0, end);
    }

    private static final class Table {
        final String name;
        final Map<String, String> declarations = new LinkedHashMap<>();
        final Map<String, List<String>> rules = new LinkedHashMap<>();
        final List<String> other = new ArrayList<>();

        Table(String name) {
            this.name = name;
        }
    }
}
