package io.rulesync.agent.rules;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Chain;
import io.rulesync.model.rules.Table;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * An iptables-restore file as the compiler writes it (and the golden fixtures hold it): tables,
 * chain declarations and {@code -A} lines. Test-only; it fails loudly on anything else.
 */
record RestoreFile(String name, Path path, IpFamily family, Map<Table, List<Chain>> chains) {

    /** The golden fixtures of the compiler module (the test runs in the node-agent module directory). */
    static final Path GOLDEN = Path.of("../compiler/src/test/resources/golden");
    /** Hand-written cases that pin kernel formatting the golden files do not reach. */
    static final Path EDGE_CASES = Path.of("src/test/resources/rules");

    private static final Pattern FAMILY = Pattern.compile("(?m)^ipFamily:\\s*(\\S+)\\s*$");
    private static final Pattern DECLARATION = Pattern.compile(":(\\S+) - \\[0:0\\]");

    /** Every golden case (kube-proxy's and rulesync's), sorted by name. */
    static List<RestoreFile> golden() {
        List<RestoreFile> out = new ArrayList<>();
        for (String group : List.of("kube-proxy", "rulesync")) {
            try (Stream<Path> s = Files.list(GOLDEN.resolve(group))) {
                for (Path dir : s.filter(Files::isDirectory).sorted().toList()) {
                    Path expected = dir.resolve("expected.iptables");
                    if (dir.getFileName().toString().startsWith("_") || !Files.exists(expected)) {
                        continue;
                    }
                    String caseYaml = Files.readString(dir.resolve("case.yaml"));
                    Matcher m = FAMILY.matcher(caseYaml);
                    IpFamily family = m.find() ? IpFamily.fromId(m.group(1)) : IpFamily.IPV4;
                    out.add(read(group + "/" + dir.getFileName(), expected, family));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return out;
    }

    /** The edge-case files; the family is the file name's suffix ({@code -ipv4}/{@code -ipv6}). */
    static List<RestoreFile> edgeCases() {
        try (Stream<Path> s = Files.list(EDGE_CASES)) {
            return s.filter(p -> p.toString().endsWith(".iptables"))
                    .sorted()
                    .map(p -> {
                        String file = p.getFileName().toString();
                        IpFamily family = file.endsWith("-ipv6.iptables") ? IpFamily.IPV6 : IpFamily.IPV4;
                        return read("edge/" + file, p, family);
                    })
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static RestoreFile read(String name, Path path, IpFamily family) {
        String text;
        try {
            text = Files.readString(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<Table, List<Chain>> chains = new EnumMap<>(Table.class);
        Map<String, List<String>> current = null;
        Table table = null;
        int lineNo = 0;
        for (String line : text.split("\n")) {
            lineNo++;
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = path + ":" + lineNo + ": ";
            if (line.startsWith("*")) {
                table = switch (line) {
                    case "*filter" -> Table.FILTER;
                    case "*nat" -> Table.NAT;
                    default -> throw new IllegalStateException(where + "unknown table " + line);
                };
                current = new LinkedHashMap<>();
            } else if (line.equals("COMMIT")) {
                List<Chain> list = new ArrayList<>();
                current.forEach((c, rules) -> list.add(new Chain(c, rules)));
                chains.put(table, List.copyOf(list));
                current = null;
            } else if (line.startsWith(":")) {
                Matcher m = DECLARATION.matcher(line);
                if (!m.matches()) {
                    throw new IllegalStateException(where + "bad declaration " + line);
                }
                current.put(m.group(1), new ArrayList<>());
            } else if (line.startsWith("-A ")) {
                int space = line.indexOf(' ', 3);
                List<String> rules = current.get(line.substring(3, space));
                if (rules == null) {
                    throw new IllegalStateException(where + "rule for an undeclared chain: " + line);
                }
                rules.add(line.substring(space + 1));
            } else {
                throw new IllegalStateException(where + "unexpected line " + line);
            }
        }
        if (current != null) {
            throw new IllegalStateException(path + ": no COMMIT at the end");
        }
        return new RestoreFile(name, path, family, chains);
    }

    @Override
    public String toString() {
        return name + " (" + family.id() + ")";
    }
}
