package dev.runbus.internal.redis;

import dev.runbus.RunbusException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/** Turns Redis client failures into {@link RunbusException}s that say what was being done. */
public final class Calls {

    private Calls() {
    }

    public static <T> T call(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (RunbusException | IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new RunbusException(what + " failed: " + describe(e), e);
        }
    }

    /**
     * A failure's message; for Redis's NOPERM (an ACL user without a right runbus needs, whose message names the
     * command or says it is the keys) with where the rights runbus needs are listed.
     */
    public static String describe(Throwable e) {
        String message = String.valueOf(e.getMessage());
        return message.contains("NOPERM") ? message + " (the Redis user lacks a right runbus needs; the ACLs of a"
                + " worker and of a publisher are in docs/security.md)" : message;
    }

    public static <T> T await(String what, Future<T> future, long timeoutMillis) {
        try {
            return future.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RunbusException(what + " interrupted", e);
        } catch (ExecutionException e) {
            throw new RunbusException(what + " failed: " + describe(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            throw new RunbusException(what + " timed out after " + timeoutMillis + " ms", e);
        }
    }
}
