package io.rulesync.cli.output;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Rows under headers, in columns two spaces apart, as {@code kubectl get} prints them. On a terminal narrower than the
 * table each line is cut to fit and ends in an ellipsis, which takes from the last column (the free text: a cause, a
 * reason, an error) first, so what identifies a row stays whole. A pipe or a file gets whole lines.
 */
public final class Table {
    private final List<String> headers;
    private final List<List<String>> rows = new ArrayList<>();

    public Table(String... headers) {
        this.headers = List.of(headers);
    }

    /** Adds a row; null cells print as {@code -}, and line breaks inside a cell become spaces. */
    public Table row(Object... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException(cells.length + " cells for " + headers.size() + " columns");
        }
        rows.add(Arrays.stream(cells)
                .map(c -> c == null ? "-" : String.valueOf(c).replaceAll("\\s*[\\r\\n]+\\s*", " "))
                .toList());
        return this;
    }

    public boolean isEmpty() {
        return rows.isEmpty();
    }

    /** The table in lines, each at most {@code width} characters long (0: no limit). */
    public String render(int width) {
        int n = headers.size();
        int[] w = new int[n];
        for (int i = 0; i < n; i++) {
            w[i] = headers.get(i).length();
            for (List<String> r : rows) {
                w[i] = Math.max(w[i], r.get(i).length());
            }
        }
        StringBuilder out = new StringBuilder();
        line(out, headers, w, width);
        rows.forEach(r -> line(out, r, w, width));
        return out.toString();
    }

    private static void line(StringBuilder out, List<String> cells, int[] w, int width) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i);
            l.append(i == cells.size() - 1 ? c : c + " ".repeat(w[i] - c.length() + 2));
        }
        String s = l.toString();
        if (width > 0 && s.length() > width) {
            s = s.substring(0, Math.max(0, width - 3)) + "..."; // ASCII: a pipe without a locale takes it too
        }
        out.append(s.stripTrailing()).append('\n');
    }
}
