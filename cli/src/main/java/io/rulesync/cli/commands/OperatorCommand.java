package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.connect.CliFailure;
import io.rulesync.cli.connect.Credentials;
import io.rulesync.cli.connect.ExitCode;
import io.rulesync.cli.output.Output;
import io.rulesync.cli.output.Terminal;
import io.rulesync.client.tls.TrustRoots;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * What every operator command shares: where the api is, how to print, and one place that turns a failure into a line
 * on standard error and an exit code. A subclass only asks the api and prints.
 */
abstract class OperatorCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            description = "Show this help.")
    boolean help;

    @Option(
            names = "--api",
            paramLabel = "URL",
            description = "The api's address (default: RULESYNC_API, else the config file's " + "'api:', else "
                    + Credentials.DEFAULT_API + ").")
    String api;

    @Option(
            names = "--config",
            paramLabel = "FILE",
            description =
                    "The configuration file with 'api:' and 'token:' (mode 0600; "
                            + "default: RULESYNC_CONFIG, else ~/.config/rulesync/config). The token is read from RULESYNC_TOKEN first.")
    Path config;

    @Option(
            names = "--ca-file",
            paramLabel = "FILE",
            defaultValue = "${env:RULESYNC_CA_FILE}",
            description = "The CA "
                    + "certificates (PEM) an https api's certificate is verified by (default: RULESYNC_CA_FILE, else the Java runtime's "
                    + "roots).")
    Path caFile;

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FORMAT",
            defaultValue = "table",
            description = "table (default), json or yaml: the api's answer as it is, for scripts.")
    Output.Format format;

    @Option(
            names = "--color",
            paramLabel = "WHEN",
            defaultValue = "auto",
            description = "auto (on a terminal; not with NO_COLOR), " + "always or never.")
    String color;

    @Override
    public final Integer call() {
        try {
            Credentials c = Credentials.resolve(api, config, System.getenv());
            Output out = new Output(
                    format.name(),
                    Terminal.detect(System.getenv(), color),
                    spec.commandLine().getOut());
            TrustRoots roots;
            try {
                roots = caFile == null ? null : TrustRoots.of(caFile);
            } catch (IllegalArgumentException e) {
                throw new CliFailure(ExitCode.USAGE, "--ca-file " + e.getMessage());
            }
            return run(new ApiConnection(c, roots), out);
        } catch (CliFailure f) {
            spec.commandLine().getErr().println("rulesync: " + f.getMessage());
            spec.commandLine().getErr().flush();
            return f.exitCode();
        }
    }

    /** Asks the api and prints; returns the exit code (0 when done). */
    abstract int run(ApiConnection api, Output out);

    static String cluster(String c) {
        return "/api/v1/clusters/" + ApiConnection.encode(c);
    }
}
