package dev.runbus.spring;

import java.lang.reflect.Type;

/**
 * JSON for payloads, backed by the application's Jackson mapper (Jackson 3's on Boot 4 when present, else
 * Jackson 2's {@code ObjectMapper}). Define a bean of this type to use another format or mapper.
 */
public interface PayloadJson {

    /** The JSON of {@code value}, UTF-8. */
    byte[] write(Object value) throws Exception;

    /** {@code json} read as {@code type} (a class or a generic type such as {@code List<Order>}). */
    Object read(byte[] json, Type type) throws Exception;
}
