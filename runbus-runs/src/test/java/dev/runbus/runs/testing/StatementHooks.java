package dev.runbus.runs.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import javax.sql.DataSource;

/**
 * A fake of our own around a real data source, for tests of the runs layer's own handling of a statement that
 * fails or waits: before each {@code prepareStatement}, the hook sees the SQL and may throw (a lost connection,
 * say) or block; every call then reaches PostgreSQL as it would.
 */
public final class StatementHooks {

    /** Called before a statement is prepared, on the thread preparing it. */
    @FunctionalInterface
    public interface Hook {
        void beforePrepare(String sql) throws Exception;
    }

    private StatementHooks() {
    }

    public static DataSource around(DataSource real, Hook hook) {
        ClassLoader loader = StatementHooks.class.getClassLoader();
        return (DataSource) Proxy.newProxyInstance(loader, new Class<?>[] {DataSource.class}, (ds, dsMethod, dsArgs) -> {
            Object result = invoke(real, dsMethod, dsArgs);
            if (!dsMethod.getName().equals("getConnection")) {
                return result;
            }
            Connection c = (Connection) result;
            return Proxy.newProxyInstance(loader, new Class<?>[] {Connection.class}, (conn, method, args) -> {
                if (method.getName().equals("prepareStatement") && args[0] instanceof String sql) {
                    hook.beforePrepare(sql);
                }
                return invoke(c, method, args);
            });
        });
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
