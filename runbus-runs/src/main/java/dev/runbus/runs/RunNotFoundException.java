package dev.runbus.runs;

import java.util.UUID;

/** No run with this id. */
public class RunNotFoundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RunNotFoundException(UUID id) {
        super("no run " + id);
    }
}
