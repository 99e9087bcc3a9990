package dev.runbus.runs.testing;

import dev.runbus.Bus;
import dev.runbus.Inspector;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Fault injection around the real thing: the calls still reach the real PostgreSQL and the real Redis; these
 * wrappers only choose the moment a fault happens, which a test could not time from outside.
 */
public final class Faults {

    private Faults() {
    }

    /**
     * A bus whose inspector runs {@code before} ahead of every {@code pendingEntry} (XPENDING of one entry) and
     * {@code after} once it returned or failed.
     */
    public static Bus aroundPendingEntry(Bus bus, Runnable before, Runnable after) {
        Inspector inspector = around(Inspector.class, bus.inspector(), "pendingEntry", before, after);
        return around(Bus.class, bus, "inspector", () -> { }, () -> { }, inspector);
    }

    /**
     * A data source whose first {@code getConnection} on a thread named {@code threadPrefix}… throws
     * {@code fault}; every other call goes to {@code real}.
     */
    public static DataSource throwingOnceOn(DataSource real, String threadPrefix, Supplier<Throwable> fault) {
        AtomicBoolean thrown = new AtomicBoolean();
        return around(DataSource.class, real, "getConnection", () -> {
            if (Thread.currentThread().getName().startsWith(threadPrefix) && thrown.compareAndSet(false, true)) {
                Faults.<RuntimeException>sneakyThrow(fault.get());
            }
        }, () -> { });
    }

    private static <T> T around(Class<T> type, T real, String method, Runnable before, Runnable after) {
        return around(type, real, method, before, after, null);
    }

    /** {@code real} with {@code before} and {@code after} around {@code method}; returns {@code result} for it if given. */
    private static <T> T around(Class<T> type, T real, String method, Runnable before, Runnable after,
                                Object result) {
        return type.cast(Proxy.newProxyInstance(Faults.class.getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
            if (!m.getName().equals(method)) {
                return invoke(m, real, args);
            }
            before.run();
            try {
                return result != null ? result : invoke(m, real, args);
            } finally {
                after.run();
            }
        }));
    }

    private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> void sneakyThrow(Throwable t) throws E {
        throw (E) t;
    }
}
