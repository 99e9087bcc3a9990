package dev.runbus.spring;

import java.lang.reflect.Type;
import tools.jackson.databind.ObjectMapper;

/** {@link PayloadJson} through a Jackson 3 {@link ObjectMapper}, Boot 4's default JSON mapper. */
final class Jackson3PayloadJson implements PayloadJson {

    private final ObjectMapper mapper;

    Jackson3PayloadJson(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    @Override
    public byte[] write(Object value) {
        return mapper.writeValueAsBytes(value);
    }

    @Override
    public Object read(byte[] json, Type type) {
        return mapper.readValue(json, mapper.constructType(type));
    }
}
