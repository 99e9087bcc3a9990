package dev.runbus.testkit;

import static dev.runbus.testkit.Deployment.LOCAL;
import static dev.runbus.testkit.Deployment.REDIS_62;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/** A class marked @OnDeployments runs once per deployment, named after it, and what -Drunbus.deployments leaves. */
class OnDeploymentsTest {

    /** Run by {@link #run} below, not by the build (a nested class); it fails on REDIS_62 on purpose. */
    @OnDeployments({LOCAL, REDIS_62})
    static class Fixture {

        @Parameter
        Deployment deployment;

        static Stream<Integer> seeds(Deployment deployment) {
            return deployment == LOCAL ? Stream.of(1, 2) : Stream.of(3);
        }

        @ParameterizedTest
        @MethodSource("seeds")
        void holdsOnLocal(int seed) {
            assertThat(deployment).as("seed %d", seed).isEqualTo(LOCAL);
        }
    }

    /** One test that ran: the run of the class it ran in, its outcome, and its failure's message. */
    record Ran(String run, TestExecutionResult.Status status, String failure) {
    }

    /** Runs {@link Fixture} with {@code -Drunbus.deployments} as given. */
    private static List<Ran> run(String deployments) {
        String before = System.getProperty(OnDeployments.PROPERTY);
        System.setProperty(OnDeployments.PROPERTY, deployments);
        try {
            List<Ran> ran = new ArrayList<>();
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
                    .selectors(DiscoverySelectors.selectClass(Fixture.class)).build(), new TestExecutionListener() {
                        private TestPlan plan;

                        @Override
                        public void testPlanExecutionStarted(TestPlan testPlan) {
                            plan = testPlan;
                        }

                        @Override
                        public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                            if (test.isTest()) {
                                TestIdentifier run = plan.getParent(plan.getParent(test).orElseThrow()).orElseThrow();
                                ran.add(new Ran(run.getDisplayName(), result.getStatus(), result.getThrowable()
                                        .map(Throwable::getMessage).orElse(null)));
                            }
                        }
                    });
            return ran;
        } finally {
            if (before == null) {
                System.clearProperty(OnDeployments.PROPERTY);
            } else {
                System.setProperty(OnDeployments.PROPERTY, before);
            }
        }
    }

    @Test
    void eachTestRunsOncePerDeployment_namedAfterIt_andAFailureSaysWhere() {
        List<Ran> ran = run("");
        assertThat(ran).extracting(Ran::run).containsExactly("OnDeploymentsTest$Fixture on LOCAL",
                "OnDeploymentsTest$Fixture on LOCAL", "OnDeploymentsTest$Fixture on REDIS_62");
        assertThat(ran).extracting(Ran::status).containsExactly(TestExecutionResult.Status.SUCCESSFUL,
                TestExecutionResult.Status.SUCCESSFUL, TestExecutionResult.Status.FAILED);
        assertThat(ran.get(2).failure()).startsWith("on REDIS_62: ").contains("seed 3");
    }

    @Test
    void theProperty_narrowsTheRuns() {
        assertThat(run("LOCAL")).extracting(Ran::run).containsExactly("OnDeploymentsTest$Fixture on LOCAL",
                "OnDeploymentsTest$Fixture on LOCAL");
        assertThat(run("CLUSTER")).isEmpty();
    }

    @Test
    void unsetOrEmpty_leavesEveryDeployment() {
        assertThat(OnDeployments.Chosen.allowed("")).isEqualTo(EnumSet.allOf(Deployment.class));
        assertThat(OnDeployments.Chosen.allowed(" ")).isEqualTo(EnumSet.allOf(Deployment.class));
    }

    @Test
    void namesLeaveThoseOnly() {
        assertThat(OnDeployments.Chosen.allowed("LOCAL")).containsExactly(Deployment.LOCAL);
        assertThat(OnDeployments.Chosen.allowed("CLUSTER, REDIS_62"))
                .containsExactlyInAnyOrder(Deployment.CLUSTER, Deployment.REDIS_62);
    }

    @Test
    void aNameOfNoDeploymentFailsSayingWhichAreThere() {
        assertThatThrownBy(() -> OnDeployments.Chosen.allowed("LOCAL,redis7"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'redis7'")
                .hasMessageContaining("LOCAL, REDIS_62, CLUSTER, SENTINEL");
    }
}
