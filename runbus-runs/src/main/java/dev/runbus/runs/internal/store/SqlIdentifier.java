package dev.runbus.runs.internal.store;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The rule for the schema and role names runbus writes into SQL unquoted. Apart from {@code RunsConfig} so that
 * the migration scripts can be written ({@code ExportMigrations}) with nothing but this jar on the class path.
 */
public final class SqlIdentifier {

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    private SqlIdentifier() {
    }

    /** {@code value} if it is a lower-case SQL identifier; otherwise an error naming {@code what}. */
    public static String check(String what, String value) {
        Objects.requireNonNull(value, what);
        if (!IDENTIFIER.matcher(value).matches()) {
            throw new IllegalArgumentException(what + " must be a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most "
                    + "63 characters): '" + value + "'");
        }
        return value;
    }
}
