package dev.runbus.internal;

import java.util.Map;

/**
 * A stream entry as this consumer received it.
 *
 * @param previousOwner the consumer that held it before this delivery; "" when unknown or new
 */
record Entry(String streamId, Map<String, byte[]> fields, long deliveries, String previousOwner) {
}
