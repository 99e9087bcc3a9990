package dev.runbus.runs;

/** PostgreSQL failed (unreachable, a constraint, a timeout) while the runs layer talked to it. */
public class RunStoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RunStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
