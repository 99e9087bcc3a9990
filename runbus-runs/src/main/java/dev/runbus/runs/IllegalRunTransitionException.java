package dev.runbus.runs;

import java.util.UUID;

/** A requested change of status is not one of {@link RunStatus}'s legal transitions. */
public class IllegalRunTransitionException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public IllegalRunTransitionException(UUID id, RunStatus from, RunStatus to) {
        super("run " + id + " is " + from.sql() + " and cannot become " + to.sql());
    }
}
