package io.rulesync.api.params;

import io.rulesync.model.cluster.KubernetesNames;
import io.swagger.v3.oas.annotations.media.Schema;
import java.util.regex.Pattern;

/**
 * A version as a request names it: a number (1, 2, ...) or {@value #LATEST}, the cluster's newest.
 *
 * @param number the version, or 0 for {@value #LATEST}
 */
@Schema(type = "string", description = "a version number (1, 2, ...) or 'latest'", example = "latest")
public record VersionRef(long number) {
    public static final String LATEST = "latest";
    private static final Pattern NUMBER = Pattern.compile("[1-9][0-9]{0,17}");

    public static VersionRef parse(String s) {
        if (s.equals(LATEST)) {
            return new VersionRef(0);
        }
        if (!NUMBER.matcher(s).matches()) {
            throw new BadValue(
                    "'" + KubernetesNames.printable(s) + "' is not a version number (1, 2, ...) or '" + LATEST + "'");
        }
        return new VersionRef(Long.parseLong(s));
    }

    public boolean latest() {
        return number == 0;
    }

    /** The version meant, given the cluster's newest. */
    public long resolve(long head) {
        return latest() ? head : number;
    }

    /** As the request said it. */
    @Override
    public String toString() {
        return latest() ? LATEST : Long.toString(number);
    }
}
