package io.rulesync.model.manifest;

import java.util.List;

/** Input that cannot be used at all; carries every problem found, each naming its file, object and field. */
public class ManifestException extends Exception {
    private final List<Problem> problems;

    public ManifestException(List<Problem> problems) {
        super(
                problems.isEmpty()
                        ? "invalid input"
                        : problems.get(0).toString()
                                + (problems.size() > 1 ? " (and " + (problems.size() - 1) + " more)" : ""));
        this.problems = List.copyOf(problems);
    }

    public ManifestException(Problem problem) {
        this(List.of(problem));
    }

    public List<Problem> problems() {
        return problems;
    }
}
