package dev.runbus.spring;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Finds the {@link RunbusListener} methods of every bean as it is initialised. It only records them: the
 * subscriptions start in {@link RunbusListenerContainer#start()}, after every bean is ready, so a handler never
 * runs against a half-built context.
 */
final class ListenerMethods implements BeanPostProcessor {

    /** One annotated method of one bean; {@code bean} may be a proxy, and the method is one it can invoke. */
    record Found(Object bean, Method method, RunbusListener annotation) {
    }

    private final List<Found> found = new CopyOnWriteArrayList<>();

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> target = AopUtils.getTargetClass(bean);
        Map<Method, RunbusListener> annotated = MethodIntrospector.selectMethods(target,
                (MethodIntrospector.MetadataLookup<RunbusListener>) m ->
                        AnnotatedElementUtils.findMergedAnnotation(m, RunbusListener.class));
        annotated.forEach((m, a) -> found.add(new Found(bean, AopUtils.selectInvocableMethod(m, bean.getClass()), a)));
        return bean;
    }

    List<Found> all() {
        return List.copyOf(found);
    }
}
