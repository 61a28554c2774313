package io.rulesync.agent.rules;

import io.rulesync.model.cluster.KubernetesNames;

/** Quoting of refused input for error messages: the text came from the network and may hold anything. */
final class Printable {
    private Printable() {
    }

    static String of(String s) {
        return s == null ? "(none)" : KubernetesNames.printable(s);
    }

    /** A value in single quotes, so that empty strings and spaces are visible. */
    static String quoted(String s) {
        return "'" + of(s) + "'";
    }
}
