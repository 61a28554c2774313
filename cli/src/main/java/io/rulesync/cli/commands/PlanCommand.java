package io.rulesync.cli.commands;

import io.rulesync.cli.connect.ApiConnection;
import io.rulesync.cli.connect.CliFailure;
import io.rulesync.cli.connect.ExitCode;
import io.rulesync.cli.output.DiffText;
import io.rulesync.cli.output.Output;
import io.rulesync.model.files.ManifestReader;
import io.rulesync.model.manifest.ManifestException;
import io.rulesync.model.manifest.ManifestObjects;
import io.rulesync.model.manifest.Problem;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import tools.jackson.databind.JsonNode;

/**
 * {@code rulesync plan}: what the manifests would change in each node's rules, asked of the api, which compiles the
 * cluster's stored state with them and stores nothing. The files are read here first, so a mistake in them is named by
 * file and line before anything is sent.
 */
@Command(
        name = "plan",
        description = "What applying the manifests (or removing their objects, with --delete) would change in each "
                + "node's rules, as a unified diff per group of nodes; nothing is stored. Exit status as kubectl diff's: 0 nothing would "
                + "change, 1 some node's rules would change, 2 the input is wrong or would be refused (admission, unknown cluster), "
                + "3 the api cannot be reached.")
final class PlanCommand extends OperatorCommand {
    /** Some node's rules would change (kubectl diff's 1). */
    static final int CHANGES = 1;

    @Parameters(index = "0", paramLabel = "CLUSTER")
    String cluster;

    @Option(
            names = {"-f", "--filename"},
            required = true,
            paramLabel = "PATH",
            description =
                    "YAML or JSON file, or folder of them (multi-document YAML and kind: List are read). Repeatable.")
    List<Path> paths = new ArrayList<>();

    @Option(names = "--delete", description = "Plan removing the objects the manifests name, instead of applying them.")
    boolean delete;

    @Mixin
    DiffScope scope = new DiffScope();

    @Override
    int run(ApiConnection api, Output out) {
        String query = (delete ? "&delete=true" : "") + scope.query();
        List<Path> files = files();
        check(files);
        JsonNode plan;
        try {
            plan = api.post(DiffScope.withQuery(cluster(cluster) + "/plan", query), body(files), "application/yaml")
                    .json();
        } catch (CliFailure f) {
            // kubectl diff's habit: 1 means differences, so a refusal is 2 or more.
            throw f.exitCode() == ExitCode.REFUSED ? new CliFailure(ExitCode.USAGE, f.getMessage()) : f;
        }
        if (out.structured()) {
            out.structured(plan);
        } else {
            out.text(DiffText.colour(plan.path("text").asString(""), out.terminal()));
        }
        if (!plan.path("refused").isEmpty()) {
            return ExitCode.USAGE;
        }
        return plan.path("changes").asBoolean(false) ? CHANGES : ExitCode.OK;
    }

    /** The files named, folders expanded, in the order given. */
    private List<Path> files() {
        List<Path> files = new ArrayList<>();
        for (Path p : paths) {
            try {
                if (Files.isDirectory(p)) {
                    files.addAll(ManifestReader.manifestFiles(p));
                } else if (Files.isRegularFile(p)) {
                    files.add(p);
                } else {
                    throw new FileNotFoundException("no such file or folder");
                }
            } catch (IOException e) {
                throw new CliFailure(ExitCode.USAGE, p + ": cannot be read: " + e.getMessage());
            }
        }
        return files;
    }

    /** Reads the files as the api will, so a mistake is named by file and line, not by its place in the request. */
    private static void check(List<Path> files) {
        ManifestObjects objects = new ManifestObjects();
        List<Problem> problems = new ArrayList<>();
        try {
            ManifestReader.readEach(files, ManifestReader.DEFAULT_MAX_FILE_BYTES, objects);
        } catch (ManifestException e) {
            problems.addAll(e.problems());
        }
        problems.addAll(0, objects.problems());
        if (!problems.isEmpty()) {
            throw new CliFailure(
                    ExitCode.USAGE,
                    problems.size() + " problem(s) with the manifests:\n  "
                            + String.join(
                                    "\n  ",
                                    problems.stream().map(Problem::toString).toList()));
        }
    }

    /** The files as one YAML stream, each its own document(s), sent with its length (the api takes no chunked body). */
    private static HttpRequest.BodyPublisher body(List<Path> files) {
        List<HttpRequest.BodyPublisher> parts = new ArrayList<>();
        for (Path f : files) {
            try {
                parts.add(HttpRequest.BodyPublishers.ofString("---\n"));
                parts.add(HttpRequest.BodyPublishers.ofFile(f));
                parts.add(HttpRequest.BodyPublishers.ofString("\n"));
            } catch (FileNotFoundException e) {
                throw new CliFailure(ExitCode.USAGE, f + ": cannot be read: " + e.getMessage());
            }
        }
        return HttpRequest.BodyPublishers.concat(parts.toArray(HttpRequest.BodyPublisher[]::new));
    }
}
