package dev.runbus.spring;

import dev.runbus.Delivery;
import java.lang.reflect.Type;

/**
 * A listener's payload could not be read as its parameter's type. Thrown from the handler, so the entry is
 * retried and then dead-lettered with this message as its reason: a malformed message is isolated, not looped on.
 */
public class PayloadConversionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    PayloadConversionException(Delivery delivery, Type target, Throwable cause) {
        super("cannot read the payload of entry " + delivery.streamId() + " (type " + delivery.message().type()
                + ") on topic " + delivery.topic() + " as " + target.getTypeName() + ": " + cause.getMessage(), cause);
    }
}
