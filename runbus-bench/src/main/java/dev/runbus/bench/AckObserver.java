package dev.runbus.bench;

import dev.runbus.Subscription;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Measurement only: tells when Redis confirmed runbus's acknowledgement of an entry. runbus acknowledges in
 * batches through its acker (from the thread that finished a handler, or from Lettuce's I/O thread in the reply
 * callback of the XACK before), after the handler returned, and its public API does not say when; so the
 * benchmark wraps the acker's Lettuce command interface in a proxy that, when the reply of an ack (ack.lua by
 * EVAL or FCALL: XACK and the start records' HDEL; or a plain XACK) arrives (on Lettuce's event loop, before
 * any future waiting on it completes), reports the entries it covered. Nothing about what runbus sends changes.
 * The other contenders are stamped alike where their client lets the reply be seen on its event loop
 * ({@link AckStamp}).
 *
 * <p>Reflection on internals: if their shape changes, {@link #install} returns false and the scenario
 * reports that it measured up to the handler's return instead.
 */
final class AckObserver {

    /** Hears of every XACK of the subscription that Redis confirmed: its ids, and when (payload clock). */
    @FunctionalInterface
    interface Listener {
        void acked(String[] streamIds, long at);
    }

    private final Listener listener;

    AckObserver(Listener listener) {
        this.listener = listener;
    }

    /** For latency runs: the handler names each entry and its enqueue time; the probe gets enqueue → ack. */
    static final class Expected implements Listener {
        private final Map<String, Long> expected = new ConcurrentHashMap<>();
        private final Probe probe;

        Expected(Probe probe) {
            this.probe = probe;
        }

        /** The handler saw this entry; its ack is awaited. */
        void expect(String streamId, long enqueuedAt) {
            expected.put(streamId, enqueuedAt);
        }

        @Override
        public void acked(String[] streamIds, long at) {
            for (String id : streamIds) {
                Long enqueuedAt = expected.remove(id);
                if (enqueuedAt != null) {
                    probe.acked(enqueuedAt, at);
                }
            }
        }

        /** The blocking ack call of {@code streamId} returned: stamp it now unless its reply was stamped. */
        void returned(String streamId) {
            acked(new String[] {streamId}, Payloads.now());
        }
    }

    private void acked(String[] ids) {
        listener.acked(ids, Payloads.now());
    }

    /** Wraps the acker of {@code subscription}; false when no acker with a Lettuce async interface is found. */
    boolean install(Subscription subscription) {
        try {
            for (Field f : fields(subscription.getClass())) {
                f.setAccessible(true);
                Object part = f.get(subscription);
                if (part == null || !part.getClass().getSimpleName().contains("Ack")) {
                    continue;
                }
                for (Field g : fields(part.getClass())) {
                    if (g.getType() == RedisClusterAsyncCommands.class) {
                        g.setAccessible(true);
                        Object delegate = g.get(part);
                        g.set(part, Proxy.newProxyInstance(RedisClusterAsyncCommands.class.getClassLoader(),
                                new Class<?>[] {RedisClusterAsyncCommands.class}, new Handler(delegate)));
                        return true;
                    }
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
        return false;
    }

    private static List<Field> fields(Class<?> type) {
        List<Field> out = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers()) && !f.getType().isPrimitive()) {
                    out.add(f);
                }
            }
        }
        return out;
    }

    /** EVAL, EVALSHA, or FCALL where runbus loaded its scripts as a function library. */
    private static boolean isScriptCall(String method) {
        return method.startsWith("eval") || method.startsWith("fcall");
    }

    private final class Handler implements InvocationHandler {
        private final Object delegate;

        Handler(Object delegate) {
            this.delegate = delegate;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            Object result;
            try {
                result = method.invoke(delegate, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            String[] ids = null;
            if (method.getName().equals("xack") && args != null && args.length == 3 && args[2] instanceof String[]) {
                ids = (String[]) args[2];
            } else if (isScriptCall(method.getName()) && args != null && args.length == 4
                    && args[2] instanceof String[] keys && keys.length == 2 && keys[1].contains(":starts:")
                    && args[3] instanceof byte[][] values && values.length > 1) {
                // ack.lua (XACK and the start records' HDEL), by EVAL or as a function of runbus's library
                // (FCALL, on Redis 7+): KEYS stream, start record; ARGV group, ids...
                ids = new String[values.length - 1];
                for (int i = 1; i < values.length; i++) {
                    ids[i - 1] = new String(values[i], java.nio.charset.StandardCharsets.UTF_8);
                }
            }
            if (ids != null && result instanceof CompletionStage) {
                String[] covered = ids;
                ((CompletionStage<?>) result).whenComplete((n, failure) -> {
                    if (failure == null) {
                        acked(covered);
                    }
                });
            }
            return result;
        }
    }
}
