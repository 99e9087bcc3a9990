package dev.runbus.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.reflect.Type;

/** {@link PayloadJson} through a Jackson 2 {@link ObjectMapper}. */
final class Jackson2PayloadJson implements PayloadJson {

    private final ObjectMapper mapper;

    Jackson2PayloadJson(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    @Override
    public byte[] write(Object value) throws Exception {
        return mapper.writeValueAsBytes(value);
    }

    @Override
    public Object read(byte[] json, Type type) throws Exception {
        return mapper.readValue(json, mapper.constructType(type));
    }
}
