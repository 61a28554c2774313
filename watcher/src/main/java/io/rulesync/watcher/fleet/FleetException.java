package io.rulesync.watcher.fleet;

import io.rulesync.model.manifest.Problem;
import java.util.List;

/** A fleet file that cannot be used; every problem names the file, the cluster and the field. */
public class FleetException extends Exception {
    private final List<Problem> problems;

    public FleetException(List<Problem> problems) {
        super(
                problems.isEmpty()
                        ? "invalid fleet file"
                        : problems.get(0).toString()
                                + (problems.size() > 1 ? " (and " + (problems.size() - 1) + " more)" : ""));
        this.problems = List.copyOf(problems);
    }

    public List<Problem> problems() {
        return problems;
    }
}
