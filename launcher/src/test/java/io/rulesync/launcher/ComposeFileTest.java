package io.rulesync.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.agent.cli.AgentMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import picocli.CommandLine;

/**
 * No Docker engine runs here, so the compose file is checked the way the image would run it: every
 * rulesync service's command must parse as a real subcommand with real options, and every
 * RULESYNC_* variable it sets must be one that subcommand reads: an option's default, or (secrets,
 * which no option takes) one its --help names.
 */
class ComposeFileTest {
    private static final Pattern ENV = Pattern.compile("\\$\\{env:(RULESYNC_[A-Z_]+)}");
    private static final Pattern NAMED = Pattern.compile("\\bRULESYNC_[A-Z_]+\\b");

    @Test
    void everyServiceRunsARealSubcommandWithSettingsItReads() throws Exception {
        Map<?, ?> compose = (Map<?, ?>) new Load(LoadSettings.builder().build())
                .loadFromString(Files.readString(Path.of("../docker-compose.yml")));
        Map<?, ?> services = (Map<?, ?>) compose.get("services");
        List<String> checked = new ArrayList<>();
        for (Map.Entry<?, ?> e : services.entrySet()) {
            // YAML 1.2 has no merge keys; compose does: apply "<<: *rulesync" by hand.
            Map<Object, Object> service = new java.util.LinkedHashMap<>();
            if (((Map<?, ?>) e.getValue()).get("<<") instanceof Map<?, ?> base) {
                service.putAll(base);
            }
            service.putAll((Map<?, ?>) e.getValue());
            if (!IMAGES.containsKey(service.get("image"))) {
                continue; // kafka, postgres
            }
            List<String> command = ((List<?>) service.get("command"))
                    .stream().map(String::valueOf).toList();
            Map<?, ?> env = service.get("environment") instanceof Map<?, ?> m ? m : Map.of();
            CommandLine.ParseResult sub = parse(
                    String.valueOf(e.getKey()),
                    String.valueOf(service.get("image")),
                    command,
                    env.keySet().stream().map(String::valueOf).toList());
            checked.add(e.getKey() + ":" + sub.commandSpec().name());
        }
        assertThat(checked)
                .containsExactlyInAnyOrder("watcher:watcher", "compiler:compiler", "api:api", "node-agent:agent");
    }

    /** The images the Dockerfile builds, by the names the compose file and the manifests give them, and their command lines. */
    static final Map<String, Supplier<CommandLine>> IMAGES =
            Map.of("rulesync:dev", Main::commandLine, "rulesync-agent:dev", AgentMain::commandLine);

    /**
     * Parses {@code command} as {@code image}'s entrypoint would (failing on anything unknown) and checks that
     * every RULESYNC_* name in {@code env} is read by the subcommand (as an option's default).
     */
    static CommandLine.ParseResult parse(String what, String image, List<String> command, List<String> env) {
        assertThat(IMAGES).as("%s runs an image the Dockerfile builds", what).containsKey(image);
        CommandLine root = IMAGES.get(image).get();
        root.setInterpolateVariables(false); // keep "${env:NAME}" defaults as written, to see what each option reads
        CommandLine.ParseResult parsed = root.parseArgs(command.toArray(String[]::new)); // throws on anything unknown
        CommandLine.ParseResult sub = parsed.subcommand();
        assertThat(sub).as("%s runs a subcommand", what).isNotNull();
        Set<String> read = new TreeSet<>();
        for (CommandLine.Model.OptionSpec o : sub.commandSpec().options()) {
            if (o.defaultValue() != null) {
                Matcher m = ENV.matcher(o.defaultValue());
                while (m.find()) {
                    read.add(m.group(1));
                }
            }
            // A secret is read from the environment by the code, not as an option's default; its option's help names
            // it.
            if (!o.hidden()) {
                Matcher m = NAMED.matcher(String.join(" ", o.description()));
                while (m.find()) {
                    read.add(m.group());
                }
            }
        }
        for (String name : env) {
            if (name.startsWith("RULESYNC_")) {
                assertThat(read).as("%s sets %s", what, name).contains(name);
            }
        }
        return sub;
    }
}
