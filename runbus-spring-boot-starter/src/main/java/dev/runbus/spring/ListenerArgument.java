package dev.runbus.spring;

import dev.runbus.Delivery;
import dev.runbus.Message;
import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;

/** What a listener method receives from a delivery, decided once per method from its parameter's type. */
@FunctionalInterface
interface ListenerArgument {

    Object from(Delivery delivery);

    static ListenerArgument of(Method method, PayloadJson json) {
        if (method.getParameterCount() != 1) {
            throw new IllegalStateException("@RunbusListener method " + method
                    + " must take exactly one parameter (Delivery, Message, byte[], String or a payload type)");
        }
        Class<?> raw = method.getParameterTypes()[0];
        if (raw == Delivery.class) {
            return d -> d;
        }
        if (raw == Message.class) {
            return Delivery::message;
        }
        if (raw == byte[].class) {
            return d -> d.message().payload();
        }
        if (raw == String.class) {
            return d -> new String(d.message().payload(), StandardCharsets.UTF_8);
        }
        Type type = method.getGenericParameterTypes()[0];
        if (json == null) {
            throw new IllegalStateException("@RunbusListener method " + method + " takes " + type.getTypeName()
                    + ", which needs Jackson on the classpath (or a PayloadJson bean)");
        }
        return d -> {
            try {
                return json.read(d.message().payload(), type);
            } catch (Exception e) {
                throw new PayloadConversionException(d, type, e);
            }
        };
    }
}
