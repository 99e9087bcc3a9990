package dev.runbus;

/** A failure of the bus itself (Redis unreachable, a script error, a closed bus). */
public class RunbusException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RunbusException(String message) {
        super(message);
    }

    public RunbusException(String message, Throwable cause) {
        super(message, cause);
    }
}
