package dev.runbus.runs;

/**
 * A submission that this runs layer cannot take, refused before anything is written: {@link #field()} names the
 * component of {@link NewRun} that is wrong (e.g. {@code userId}), {@link #problem()} says what is wrong with it.
 * {@link NewRun}'s constructor throws it for a text PostgreSQL cannot store as it is (a NUL, a lone surrogate) and an
 * id longer than its index holds; {@link Runs#submit} for what the configuration decides (a user id too long to key
 * an ordered run's trigger, a delay).
 */
public class InvalidRunException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String field;
    private final String problem;

    public InvalidRunException(String field, String problem) {
        super(field + " " + problem);
        this.field = field;
        this.problem = problem;
    }

    /** The component of {@link NewRun}, as named there. */
    public String field() {
        return field;
    }

    /** What is wrong, without the field's name: "has 1001 characters; …". */
    public String problem() {
        return problem;
    }
}
