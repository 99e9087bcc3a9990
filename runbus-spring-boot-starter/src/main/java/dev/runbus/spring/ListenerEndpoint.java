package dev.runbus.spring;

import dev.runbus.Handler;
import dev.runbus.SubscribeOptions;

/** Everything one subscription of a listener method needs, resolved from its annotation and the properties. */
record ListenerEndpoint(String topic, String group, String consumer, Handler handler, SubscribeOptions options) {
}
