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
 * @param runsSkipped           of those, found lost but not republished because no trigger can be built from
 *                              the row (an ordered run whose user id is too long to be a message key): reported
 *                              with a WARN and left as they are
 * @param expired               pending runs past their expiry ({@link NewRun#expireAfter()}) made expired (at most
 *                              {@code sweepBatch} a sweep)
 */
public record SweepResult(boolean ran, int deadLettersReconciled, int deadLettersSkipped, int examined, int live,
                          int republished, int runsSkipped, int expired) {

    public static final SweepResult SKIPPED = new SweepResult(false, 0, 0, 0, 0, 0, 0, 0);

    /** A sweep that expired no run. */
    public SweepResult(boolean ran, int deadLettersReconciled, int deadLettersSkipped, int examined, int live,
                       int republished, int runsSkipped) {
        this(ran, deadLettersReconciled, deadLettersSkipped, examined, live, republished, runsSkipped, 0);
    }
}
