package dev.runbus.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the handler of a consumer group of a topic. The method takes one parameter: a
 * {@link dev.runbus.Delivery}, a {@link dev.runbus.Message}, a {@code byte[]} or {@code String} payload, or any
 * other type, read from the payload's JSON with the application's Jackson mapper. Returning acknowledges the
 * entry; throwing leaves it to be delivered again, and after {@code maxDeliveries} it goes to the dead-letter
 * stream. A payload that cannot be read as the parameter's type is a failure like any other, with a reason that
 * says so: it ends in the dead-letter stream too, never in a crash loop.
 *
 * <p>Attributes given as strings accept {@code ${…}} placeholders; an empty one takes the
 * {@code runbus.listener.*} property's value.
 *
 * <pre>{@code
 * @RunbusListener(topic = "orders", group = "billing", concurrency = "8")
 * void bill(OrderPlaced order) { ... }
 * }</pre>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RunbusListener {

    /** The topic to consume. */
    String topic();

    /** The consumer group: consumers of one group share the entries, each group gets all of them. */
    String group();

    /** Handlers running at once; default {@code runbus.listener.concurrency}. */
    String concurrency() default "";

    /** Deliveries before the dead-letter stream; default {@code runbus.listener.max-deliveries}. */
    String maxDeliveries() default "";

    /** {@code "true"} for per-partition order; default {@code runbus.listener.ordered}. */
    String ordered() default "";
}
