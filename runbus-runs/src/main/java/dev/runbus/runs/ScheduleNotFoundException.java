package dev.runbus.runs;

/** No live schedule of this name. */
public class ScheduleNotFoundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ScheduleNotFoundException(String name) {
        super("no schedule " + name);
    }
}
