package dev.runbus.testkit;

import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.opentest4j.TestAbortedException;

/**
 * What {@link OnDeployments} adds to a class besides its runs:
 * <ul>
 *   <li>the deployment in front of a failure's message, as {@code on CLUSTER: …}, the failure itself its cause: a
 *       build report names a class's runs by their index ({@code BusBehaviourTest[3]}), not by their display names,
 *       which carry the deployment. An assertion failure stays one, any other failure stays an error; an aborted
 *       test (an assumption) is left as it is;</li>
 *   <li>the deployment as a parameter of the class's methods, a {@code @MethodSource} factory among them (whose
 *       seeds, say, differ by deployment).</li>
 * </ul>
 */
public final class OnDeploymentsExtension implements TestExecutionExceptionHandler,
        LifecycleMethodExecutionExceptionHandler, ParameterResolver {

    /** Not the constructor's nor a {@code @…ParameterizedClassInvocation} method's: JUnit hands those their own. */
    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Executable method = parameter.getDeclaringExecutable();
        return parameter.getParameter().getType() == Deployment.class && !(method instanceof Constructor)
                && !method.isAnnotationPresent(BeforeParameterizedClassInvocation.class)
                && !method.isAnnotationPresent(AfterParameterizedClassInvocation.class)
                && deploymentOf(context).isPresent();
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return deploymentOf(context).orElseThrow();
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        throw named(context, failure);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable failure)
            throws Throwable {
        throw named(context, failure);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable failure)
            throws Throwable {
        throw named(context, failure);
    }

    @Override
    public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable failure)
            throws Throwable {
        throw named(context, failure);
    }

    @Override
    public void handleAfterAllMethodExecutionException(ExtensionContext context, Throwable failure)
            throws Throwable {
        throw named(context, failure);
    }

    private static Throwable named(ExtensionContext context, Throwable failure) {
        Optional<Deployment> deployment = deploymentOf(context);
        if (deployment.isEmpty() || failure instanceof TestAbortedException
                || String.valueOf(failure.getMessage()).startsWith("on " + deployment.get() + ": ")) {
            return failure;
        }
        String message = "on " + deployment.get() + ": " + failure;
        return failure instanceof AssertionError ? new AssertionError(message, failure)
                : new IllegalStateException(message, failure);
    }

    /** The deployment a context runs on: its class's run is named {@code "<class> on <deployment>"}. */
    static Optional<Deployment> deploymentOf(ExtensionContext context) {
        for (ExtensionContext c = context; c != null; c = c.getParent().orElse(null)) {
            for (Deployment d : Deployment.values()) {
                if (c.getDisplayName().endsWith(" on " + d.name())) {
                    return Optional.of(d);
                }
            }
        }
        return Optional.empty();
    }
}
