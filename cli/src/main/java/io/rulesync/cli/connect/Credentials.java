package io.rulesync.cli.connect;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Map;
import java.util.Set;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;

/**
 * Where the api is and which token to send, each from the first place that has it: the {@code --api} option, then the
 * environment ({@code RULESYNC_API}, {@code RULESYNC_TOKEN}), then the configuration file. A token is never an option:
 * options end up in shell histories and in every user's {@code ps}.
 *
 * <p>The configuration file ({@code --config}, {@code RULESYNC_CONFIG}, else {@code $XDG_CONFIG_HOME/rulesync/config},
 * else {@code ~/.config/rulesync/config}) is YAML with {@code api:} and {@code token:}. Like ssh with a private key, the
 * command line refuses one that other users may read.
 *
 * @param token null when none is set (the api then answers 401, which the command line explains)
 */
public record Credentials(String api, String token, Path configFile) {
    public static final String DEFAULT_API = "http://127.0.0.1:8080";

    /** Resolves the credentials from {@code apiOption} (may be null), {@code configOption} (may be null) and {@code env}. */
    public static Credentials resolve(String apiOption, Path configOption, Map<String, String> env) {
        Path config = configOption != null
                ? configOption
                : env.get("RULESYNC_CONFIG") != null
                        ? Path.of(env.get("RULESYNC_CONFIG"))
                        : env.get("XDG_CONFIG_HOME") != null
                                ? Path.of(env.get("XDG_CONFIG_HOME"), "rulesync", "config")
                                : Path.of(
                                        env.getOrDefault("HOME", System.getProperty("user.home")),
                                        ".config",
                                        "rulesync",
                                        "config");
        Map<?, ?> file = read(config, configOption != null || env.get("RULESYNC_CONFIG") != null);
        String api = first(apiOption, env.get("RULESYNC_API"), text(file, "api", config));
        String token = first(env.get("RULESYNC_TOKEN"), text(file, "token", config), null);
        if (api == null) {
            api = DEFAULT_API;
        }
        if (!api.startsWith("http://") && !api.startsWith("https://")) {
            throw new CliFailure(ExitCode.USAGE, "api address '" + api + "' is not an http:// or https:// URL");
        }
        return new Credentials(api.replaceAll("/+$", ""), token, config);
    }

    private static Map<?, ?> read(Path config, boolean named) {
        if (!Files.exists(config)) {
            if (named) {
                throw new CliFailure(ExitCode.USAGE, "configuration file " + config + " does not exist");
            }
            return Map.of();
        }
        try {
            Set<PosixFilePermission> mode = Files.getPosixFilePermissions(config);
            if (mode.stream()
                    .anyMatch(p -> p.name().startsWith("GROUP") || p.name().startsWith("OTHERS"))) {
                throw new CliFailure(
                        ExitCode.USAGE,
                        "configuration file " + config + " may hold a token and other users can read it ("
                                + java.nio.file.attribute.PosixFilePermissions.toString(mode) + "); run: chmod 600 "
                                + config);
            }
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system: nothing to check.
        } catch (IOException e) {
            throw new CliFailure(ExitCode.USAGE, "cannot read configuration file " + config + ": " + e.getMessage());
        }
        try {
            Object tree = new Load(LoadSettings.builder().build()).loadFromString(Files.readString(config));
            if (tree == null) {
                return Map.of();
            }
            if (!(tree instanceof Map<?, ?> m)) {
                throw new CliFailure(
                        ExitCode.USAGE, "configuration file " + config + ": expected 'api:' and 'token:' keys");
            }
            return m;
        } catch (IOException | YamlEngineException e) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    "cannot read configuration file " + config + ": "
                            + e.getMessage().lines().findFirst().orElse(""));
        }
    }

    private static String text(Map<?, ?> file, String key, Path config) {
        Object v = file.get(key);
        if (v != null && !(v instanceof String)) {
            throw new CliFailure(ExitCode.USAGE, "configuration file " + config + ": '" + key + "' must be a string");
        }
        return (String) v;
    }

    private static String first(String a, String b, String c) {
        return a != null && !a.isBlank() ? a : b != null && !b.isBlank() ? b : c;
    }

    /** Where the token was looked for, for the message of a 401. */
    public String whereTokensComeFrom() {
        return "set RULESYNC_TOKEN, or 'token:' in " + configFile + " (mode 0600)";
    }
}
