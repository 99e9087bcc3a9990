package dev.runbus.runs;

/** {@link Schedules#create} of a name a live schedule has: {@link Schedules#put} replaces it. */
public class ScheduleExistsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ScheduleExistsException(String name) {
        super("a schedule named " + name + " exists; put replaces it");
    }
}
