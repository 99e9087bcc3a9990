package dev.runbus.runs;

/**
 * What one sweep did.
 *
 * @param ran                   false when another process held the sweeper lock (nothing was done)
 * @param deadLettersReconciled dead letters of the runs topic found and their runs marked failed
 * @param deadLettersSkipped    dead letters that could not be used (not decodable, or not naming a run's
 *                              trigger and the group that gave up on it): reported and passed over
 * @param examined              unfinished runs older than the threshold looked at
 * @param live                  of those, still having a live delivery (left alone)
 * @param republished           of those, republished to the stream
 */
public record SweepResult(boolean ran, int deadLettersReconciled, int deadLettersSkipped, int examined, int live,
                          int republished) {

    public static final SweepResult SKIPPED = new SweepResult(false, 0, 0, 0, 0, 0);
}
