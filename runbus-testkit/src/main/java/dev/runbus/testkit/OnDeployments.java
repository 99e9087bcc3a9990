package dev.runbus.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.AnnotationBasedArgumentsProvider;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.ArgumentsSource;
import org.junit.jupiter.params.support.ParameterDeclarations;

/**
 * Runs every test of a class once per {@link Deployment}: each run of the class is named
 * {@code "<class> on <deployment>"}, and a failure's message starts with {@code on <deployment>:}
 * ({@link OnDeploymentsExtension}), so a report says which one failed. The class takes the deployment as a field
 * ({@code @Parameter Deployment deployment}), as its constructor's or a {@code @BeforeParameterizedClassInvocation}
 * method's parameter (JUnit's own), or as a parameter of its other methods, a {@code @MethodSource} factory among
 * them ({@link OnDeploymentsExtension}). {@code @BeforeAll} runs once for all the deployments.
 *
 * <p>{@code -Drunbus.deployments=LOCAL,CLUSTER} narrows every class to those of its deployments (the fast tier runs
 * on {@code LOCAL} alone); a class left with none runs nothing. Unset or empty: all.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
@ParameterizedClass(name = "{displayName} on {0}", allowZeroInvocations = true)
@ArgumentsSource(OnDeployments.Chosen.class)
@ExtendWith(OnDeploymentsExtension.class)
public @interface OnDeployments {

    /** The system property that narrows the deployments: names of {@link Deployment}, comma-separated. */
    String PROPERTY = "runbus.deployments";

    Deployment[] value();

    /** The class's deployments that {@value #PROPERTY} leaves, in the class's order. */
    final class Chosen extends AnnotationBasedArgumentsProvider<OnDeployments> {

        @Override
        protected Stream<? extends Arguments> provideArguments(ParameterDeclarations parameters,
                                                                ExtensionContext context, OnDeployments annotation) {
            Set<Deployment> allowed = allowed(System.getProperty(PROPERTY, ""));
            return Arrays.stream(annotation.value()).filter(allowed::contains).map(Arguments::of);
        }

        /** The deployments a value of {@value #PROPERTY} names; all for an empty one. A name of none fails. */
        static Set<Deployment> allowed(String property) {
            if (property.isBlank()) {
                return EnumSet.allOf(Deployment.class);
            }
            Set<Deployment> allowed = EnumSet.noneOf(Deployment.class);
            for (String name : property.split(",")) {
                try {
                    allowed.add(Deployment.valueOf(name.strip()));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("-D" + PROPERTY + " names no deployment '" + name.strip()
                            + "'; the deployments are " + Arrays.toString(Deployment.values()), e);
                }
            }
            return allowed;
        }
    }
}
