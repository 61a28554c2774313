package io.rulesync.testing.needs;

import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Whether this is CI's run, where a missing need that an install can bring fails instead of
 * skipping: {@code CI=true} in the environment, as CI services set it and {@code .ci/run} exports it.
 * The JUnit configuration parameter {@value #PARAMETER} overrides it (this module's own tests use it).
 */
final class Ci {
    static final String PARAMETER = "rulesync.ci";

    private Ci() {}

    static boolean strict() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    static boolean strict(ExtensionContext context) {
        return context.getConfigurationParameter(PARAMETER)
                .map(Boolean::parseBoolean)
                .orElseGet(Ci::strict);
    }
}
