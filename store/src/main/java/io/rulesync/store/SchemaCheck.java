package io.rulesync.store;

import java.util.stream.Collectors;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.ValidateOutput;
import org.flywaydb.core.api.output.ValidateResult;

/**
 * What a reader of the store does with the schema instead of migrating it: checks that every
 * migration it carries was applied (migrations newer than it are fine). The compiler, the writer,
 * migrates; see this module's README for why.
 */
public final class SchemaCheck {
    private SchemaCheck() {}

    /** Validates and, when the database is behind or differs, refuses with one line naming the migrations. */
    public static void require(Flyway flyway) {
        ValidateResult result = flyway.validateWithResult();
        if (!result.validationSuccessful) {
            throw new IllegalStateException(refusal(result));
        }
    }

    static String refusal(ValidateResult result) {
        String which = result.invalidMigrations == null || result.invalidMigrations.isEmpty()
                ? String.valueOf(
                        result.errorDetails == null ? result.getAllErrorMessages() : result.errorDetails.errorMessage)
                : result.invalidMigrations.stream().map(SchemaCheck::describe).collect(Collectors.joining("; "));
        return ("the database schema is not the one this role reads (the compiler migrates it: start or upgrade the compiler "
                        + "first): " + which)
                .replaceAll("\\s*\\R\\s*", " ");
    }

    private static String describe(ValidateOutput m) {
        String why = m.errorDetails == null ? "" : m.errorDetails.errorMessage;
        // Flyway's advice (run migrate, or ignore pending migrations) is wrong for a role that must not migrate.
        why = why.contains("not applied to database") ? "not applied" : why.replaceFirst("\\s*To fix this error.*", "");
        return "V" + m.version + " " + m.description + (why.isEmpty() ? "" : ": " + why);
    }
}
