package dev.runbus.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/** What -Drunbus.deployments leaves of a class's deployments. */
class OnDeploymentsTest {

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
