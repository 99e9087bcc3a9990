package dev.runbus;

/** A dead letter was replayed before; replaying it again would deliver the message twice. */
public class DeadLetterAlreadyReplayedException extends RunbusException {
    private static final long serialVersionUID = 1L;
    private final String replayedAs;

    public DeadLetterAlreadyReplayedException(String topic, String deadLetterId, String replayedAs) {
        super("dead letter " + deadLetterId + " of topic '" + topic + "' was already replayed as stream entry "
                + replayedAs);
        this.replayedAs = replayedAs;
    }

    /** The stream id the earlier replay published. */
    public String replayedAs() {
        return replayedAs;
    }
}
