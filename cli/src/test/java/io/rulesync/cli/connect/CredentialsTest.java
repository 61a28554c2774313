package io.rulesync.cli.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CredentialsTest {
    @TempDir
    Path home;

    @Test
    void theOptionThenTheEnvironmentThenTheConfigFileThenTheDefault() throws Exception {
        Path config = home.resolve("rulesync.yaml");
        Files.writeString(config, "api: http://config:8080/\ntoken: rs_config\n");
        Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-------"));
        Map<String, String> env = Map.of("HOME", home.toString(), "RULESYNC_CONFIG", config.toString());
        assertThat(Credentials.resolve(null, null, env))
                .isEqualTo(new Credentials("http://config:8080", "rs_config", config));
        assertThat(Credentials.resolve(
                        "http://option:1",
                        null,
                        Map.of(
                                "HOME",
                                home.toString(),
                                "RULESYNC_CONFIG",
                                config.toString(),
                                "RULESYNC_API",
                                "http://env:2",
                                "RULESYNC_TOKEN",
                                "rs_env")))
                .isEqualTo(new Credentials("http://option:1", "rs_env", config));
        Credentials none = Credentials.resolve(null, null, Map.of("HOME", home.toString()));
        assertThat(none.api()).isEqualTo(Credentials.DEFAULT_API);
        assertThat(none.token()).isNull();
        assertThat(none.configFile()).isEqualTo(home.resolve(".config/rulesync/config"));
        assertThat(Credentials.resolve(null, null, Map.of("HOME", home.toString(), "XDG_CONFIG_HOME", "/etc/xdg"))
                        .configFile())
                .isEqualTo(Path.of("/etc/xdg/rulesync/config"));
    }

    @Test
    void aConfigThatIsNamedMustExistAndAnAddressMustBeHttp() {
        assertThatThrownBy(() -> Credentials.resolve(null, home.resolve("missing"), Map.of()))
                .hasMessage("configuration file " + home.resolve("missing") + " does not exist")
                .satisfies(e -> assertThat(((CliFailure) e).exitCode()).isEqualTo(ExitCode.USAGE));
        assertThatThrownBy(() -> Credentials.resolve("127.0.0.1:8080", null, Map.of("HOME", home.toString())))
                .hasMessage("api address '127.0.0.1:8080' is not an http:// or https:// URL");
    }
}
