package io.rulesync.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** The database password comes from a file only its owner (and group) may read, or from the environment; never from the command line. */
class DatabaseOptionsTest {
    @Command(name = "role", mixinStandardHelpOptions = true)
    static final class Role {
        @Mixin
        DatabaseOptions db;
    }

    private static DatabaseOptions parse(String... args) {
        Role role = new Role();
        new CommandLine(role).parseArgs(args);
        return role.db;
    }

    @Test
    void aPasswordOnTheCommandLineIsRefusedSayingWhereToPutIt() {
        assertThatThrownBy(() -> parse("--db-url", "jdbc:postgresql://h/db", "--db-password", "s3cret"))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessage(
                        "--db-password is not taken: other local users can read a command line. Give the password in the "
                                + "environment variable RULESYNC_DB_PASSWORD, or in a file only you can read with --db-password-file FILE.")
                .hasMessageNotContaining("s3cret");
        String help = new CommandLine(new Role()).getUsageMessage().replaceAll("\\s+", " ");
        assertThat(help)
                .contains("--db-password-file=FILE", "RULESYNC_DB_PASSWORD", "There is no --db-password")
                .doesNotContain("--db-password=");
    }

    @Test
    void theFilesFirstLineIsThePassword(@TempDir Path dir) throws Exception {
        Path file = secret(dir.resolve("pw"), "s3cret\n", "rw-r-----");
        DatabaseOptions db = parse("--db-url", "jdbc:postgresql://h/db", "--db-password-file", file.toString());
        assertThat(db.password()).isEqualTo("s3cret");
        assertThat(db.springProperties()).containsEntry("spring.datasource.password", "s3cret");
        // In process (the demo) the password is given as is.
        assertThat(db.usePassword("other").password()).isEqualTo("other");
    }

    @Test
    void aFileEveryoneMayReadOrNoneAtAllIsRefused(@TempDir Path dir) throws Exception {
        Path open = secret(dir.resolve("open"), "s3cret\n", "rw-r--r--");
        assertThatThrownBy(() -> parse("--db-url", "u", "--db-password-file", open.toString())
                        .password())
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessage("--db-password-file " + open
                        + ": every user of this machine may read it; chmod o-r it (600 or 640)");
        Path empty = secret(dir.resolve("empty"), "\n", "rw-------");
        assertThatThrownBy(() -> parse("--db-url", "u", "--db-password-file", empty.toString())
                        .password())
                .hasMessage("--db-password-file " + empty + ": holds no secret on its first line");
        assertThatThrownBy(() -> parse(
                                "--db-url",
                                "u",
                                "--db-password-file",
                                dir.resolve("missing").toString())
                        .password())
                .hasMessageStartingWith(
                        "--db-password-file " + dir.resolve("missing") + ": cannot be read (NoSuchFileException");
    }

    @Test
    void withoutAFileTheEnvironmentGivesIt() {
        assertThat(parse("--db-url", "u").password())
                .isEqualTo(System.getenv().getOrDefault("RULESYNC_DB_PASSWORD", ""));
    }

    private static Path secret(Path file, String content, String mode) throws Exception {
        Files.writeString(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }
}
