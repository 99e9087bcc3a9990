package dev.runbus.examples.boot;

/** The event the shop publishes, as JSON on the topic "orders". */
public record OrderPlaced(String orderId, String customer, long cents) {
}
