package dev.runbus.internal;

import dev.runbus.RunbusException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/** Turns Redis client failures into {@link RunbusException}s that say what was being done. */
final class Calls {

    private Calls() {
    }

    static <T> T call(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (RunbusException | IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new RunbusException(what + " failed: " + e.getMessage(), e);
        }
    }

    static <T> T await(String what, Future<T> future, long timeoutMillis) {
        try {
            return future.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RunbusException(what + " interrupted", e);
        } catch (ExecutionException e) {
            throw new RunbusException(what + " failed: " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new RunbusException(what + " timed out after " + timeoutMillis + " ms", e);
        }
    }
}
