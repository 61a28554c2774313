package io.rulesync.testsupport.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The {@code kafka-acls.sh --add} lines of a document, read as the tool reads them, so that a test applies exactly
 * the ACLs the deployment documents. Only the tool's explicit form is understood ({@code --allow-principal},
 * {@code --operation}, {@code --topic}, {@code --group}, {@code --transactional-id}, {@code --resource-pattern-type});
 * anything else on such a line fails, rather than being read other than the tool would. Like the tool, a line grants
 * every operation on every resource it names, to every principal, from any host.
 */
public final class KafkaAclCommands {
    private static final String TOOL = "kafka-acls.sh";

    private KafkaAclCommands() {}

    public static List<AclBinding> read(Path document) {
        List<String> lines;
        try {
            lines = Files.readAllLines(document);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<AclBinding> out = new ArrayList<>();
        for (String line : lines) {
            String command = line.strip();
            if (command.startsWith(TOOL + " ")) {
                out.addAll(parse(
                        document + ": " + command,
                        command.substring(TOOL.length()).strip().split("\\s+")));
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(document + " has no " + TOOL + " lines");
        }
        return out;
    }

    private static List<AclBinding> parse(String what, String[] args) {
        List<String> principals = new ArrayList<>();
        List<AclOperation> operations = new ArrayList<>();
        List<ResourcePattern> resources = new ArrayList<>();
        PatternType pattern = PatternType.LITERAL;
        List<String[]> named = new ArrayList<>();
        boolean add = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.startsWith("$")) {
                continue; // the shell variable of the connection options (--bootstrap-server, --command-config)
            }
            if (a.equals("--add")) {
                add = true;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(what + ": " + a + " without a value");
            }
            String v = args[++i];
            switch (a) {
                case "--allow-principal" -> principals.add(v);
                case "--operation" ->
                    operations.add(
                            AclOperation.fromString(v.toUpperCase(Locale.ROOT).replace("-", "_")));
                case "--topic", "--group", "--transactional-id" -> named.add(new String[] {a, v});
                case "--resource-pattern-type" -> pattern = PatternType.fromString(v.toUpperCase(Locale.ROOT));
                default -> throw new IllegalArgumentException(what + ": " + a + " is not understood here");
            }
        }
        for (String[] n : named) {
            ResourceType type = switch (n[0]) {
                case "--topic" -> ResourceType.TOPIC;
                case "--group" -> ResourceType.GROUP;
                default -> ResourceType.TRANSACTIONAL_ID;
            };
            resources.add(new ResourcePattern(type, n[1], pattern));
        }
        if (!add
                || principals.isEmpty()
                || operations.isEmpty()
                || resources.isEmpty()
                || operations.contains(AclOperation.UNKNOWN)
                || pattern == PatternType.UNKNOWN) {
            throw new IllegalArgumentException(what + ": needs --add, --allow-principal, --operation and a resource");
        }
        List<AclBinding> out = new ArrayList<>();
        for (String p : principals) {
            for (AclOperation o : operations) {
                for (ResourcePattern r : resources) {
                    out.add(new AclBinding(r, new AccessControlEntry(p, "*", o, AclPermissionType.ALLOW)));
                }
            }
        }
        return out;
    }
}
