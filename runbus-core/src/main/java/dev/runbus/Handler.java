package dev.runbus;

/**
 * Application code that processes one delivery.
 *
 * <p>Returning normally means the work is done: the entry is acknowledged (XACK) afterwards.
 * Throwing means it is not: the entry is delivered again when the subscription's
 * {@link SubscribeOptions#retryPolicy() retry policy} says (with the default {@link RetryPolicy#onIdle()} it stays
 * pending and is taken again once idle for {@link SubscribeOptions#minIdle()}; with a delay of the policy's own it is
 * acknowledged and a copy scheduled), until {@link SubscribeOptions#maxDeliveries()} is reached and it is moved to
 * the dead-letter stream. A handler must therefore be safe to run more than once for the same message
 * (at-least-once delivery).
 */
@FunctionalInterface
public interface Handler {
    void handle(Delivery delivery) throws Exception;
}
