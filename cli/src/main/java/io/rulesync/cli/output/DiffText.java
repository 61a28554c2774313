package io.rulesync.cli.output;

/**
 * The api's unified diff of two versions (its {@code text}, rendered by the api for every reader), coloured on a
 * terminal as diff tools colour it: the header bold, {@code @@} hunks cyan, lines gained green and lost red. Plain
 * otherwise, exactly as the api wrote it.
 */
public final class DiffText {
    private DiffText() {}

    public static String colour(String text, Terminal t) {
        StringBuilder out = new StringBuilder();
        int line = 0;
        for (String l : text.split("\n", -1)) {
            if (line++ > 0) {
                out.append('\n');
            }
            if (line <= 2 && (l.startsWith("--- ") || l.startsWith("+++ "))) {
                out.append(t.bold(l));
            } else if (l.startsWith("@@")) {
                out.append(t.cyan(l));
            } else if (l.startsWith("+")) {
                out.append(t.green(l));
            } else if (l.startsWith("-")) {
                out.append(t.red(l));
            } else {
                out.append(l);
            }
        }
        return out.toString();
    }
}
