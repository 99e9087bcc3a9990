package dev.runbus;

/** No dead letter with the given id exists in the topic's dead-letter stream (never existed or purged). */
public class NoSuchDeadLetterException extends RunbusException {
    private static final long serialVersionUID = 1L;

    public NoSuchDeadLetterException(String topic, String deadLetterId) {
        super("no dead letter " + deadLetterId + " in topic '" + topic + "'");
    }
}
