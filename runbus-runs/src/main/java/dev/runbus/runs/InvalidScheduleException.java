package dev.runbus.runs;

/**
 * A schedule this runs layer cannot take, refused before anything is written: {@link #field()} names what is wrong
 * ({@code cron}, {@code zone}, {@code interval}, …), {@link #problem()} says what is wrong with it.
 */
public class InvalidScheduleException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String field;
    private final String problem;

    public InvalidScheduleException(String field, String problem) {
        super(field + " " + problem);
        this.field = field;
        this.problem = problem;
    }

    /** What is wrong, as the schedule names it: {@code cron}, {@code zone}, {@code interval}, …. */
    public String field() {
        return field;
    }

    /** What is wrong, without the field's name. */
    public String problem() {
        return problem;
    }
}
