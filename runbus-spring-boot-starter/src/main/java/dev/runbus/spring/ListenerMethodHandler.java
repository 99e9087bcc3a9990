package dev.runbus.spring;

import dev.runbus.Delivery;
import dev.runbus.Handler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/** Calls one {@link RunbusListener} method for each delivery: its return acknowledges, its exception retries. */
final class ListenerMethodHandler implements Handler {

    private final Object bean;
    private final Method method;
    private final ListenerArgument argument;

    ListenerMethodHandler(Object bean, Method method, ListenerArgument argument) {
        this.bean = bean;
        this.method = method;
        this.argument = argument;
        method.setAccessible(true);
    }

    @Override
    public void handle(Delivery delivery) throws Exception {
        Object arg = argument.from(delivery);
        try {
            method.invoke(bean, arg);
        } catch (InvocationTargetException e) {
            // The method's own exception is the failure the dead letter should name, not the reflective wrapper.
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    @Override
    public String toString() {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName();
    }
}
