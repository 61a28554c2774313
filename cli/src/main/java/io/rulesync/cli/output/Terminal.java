package io.rulesync.cli.output;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the standard output is: how wide (0: no limit, as for a pipe or a file) and whether it takes colour.
 *
 * <p>Width: {@code COLUMNS} when set, else the terminal's (from {@code stty size}) when there is one. Colour: only on a
 * terminal, never with {@code NO_COLOR} set or {@code TERM=dumb}; {@code --color always|never} decides otherwise.
 */
public record Terminal(int width, boolean color) {
    public static final Terminal PLAIN = new Terminal(0, false);

    public static Terminal detect(Map<String, String> env, String colorOption) {
        boolean tty = System.console() != null;
        int width = 0;
        String columns = env.get("COLUMNS");
        if (columns != null && columns.matches("[0-9]{1,4}")) {
            width = Integer.parseInt(columns);
        } else if (tty) {
            width = sttyColumns();
        }
        boolean color = switch (colorOption == null ? "auto" : colorOption.toLowerCase(Locale.ROOT)) {
            case "always" -> true;
            case "never" -> false;
            default -> tty && env.get("NO_COLOR") == null && !"dumb".equals(env.get("TERM"));
        };
        return new Terminal(width, color);
    }

    /** The terminal's columns, or 0 when they cannot be read. */
    private static int sttyColumns() {
        try {
            Process p = new ProcessBuilder("sh", "-c", "stty size < /dev/tty")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (p.waitFor(1, TimeUnit.SECONDS) && p.exitValue() == 0 && out.matches("[0-9]+ [0-9]+")) {
                return Integer.parseInt(out.split(" ")[1]);
            }
        } catch (IOException e) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    public String red(String s) {
        return paint("31", s);
    }

    public String green(String s) {
        return paint("32", s);
    }

    public String cyan(String s) {
        return paint("36", s);
    }

    public String bold(String s) {
        return paint("1", s);
    }

    private String paint(String code, String s) {
        return color ? "\u001b[" + code + "m" + s + "\u001b[0m" : s;
    }
}
