package dev.runbus.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ServerCountersTest {

    private static final String BEFORE = String.join("\r\n",
            "# CPU",
            "used_cpu_sys:1.500000",
            "used_cpu_user:2.250000",
            "used_cpu_sys_children:9.000000",
            "# Commandstats",
            "cmdstat_xreadgroup:calls=10,usec=100,usec_per_call=10.00,rejected_calls=0,failed_calls=0",
            "cmdstat_info:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0",
            "cmdstat_cluster|nodes:calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0",
            "");

    private static final String AFTER = String.join("\r\n",
            "# CPU",
            "used_cpu_sys:2.000000",
            "used_cpu_user:3.000000",
            "used_cpu_sys_children:9.000000",
            "# Commandstats",
            "cmdstat_xreadgroup:calls=70,usec=700,usec_per_call=10.00,rejected_calls=0,failed_calls=0",
            "cmdstat_xack:calls=40,usec=200,usec_per_call=5.00,rejected_calls=0,failed_calls=0",
            "cmdstat_info:calls=4,usec=40,usec_per_call=10.00,rejected_calls=0,failed_calls=0",
            "cmdstat_cluster|nodes:calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0",
            "");

    @Test
    void readsCallsMicrosAndCpuOfTheServerItself() {
        ServerCounters c = ServerCounters.parse(BEFORE);
        assertThat(c.calls()).containsEntry("xreadgroup", 10L).containsEntry("cluster|nodes", 1L);
        assertThat(c.micros()).containsEntry("info", 30L);
        assertThat(c.cpuSeconds()).isCloseTo(3.75, within(1e-9)); // children (forks) are not the server's work
    }

    @Test
    void theDifferenceLeavesOutUnchangedCommandsAndTheBenchmarksOwnCalls() {
        ServerCounters d = ServerCounters.parse(AFTER).minus(ServerCounters.parse(BEFORE)).without("info", 1);
        assertThat(d.calls()).containsOnlyKeys("xreadgroup", "xack").containsEntry("xreadgroup", 60L)
                .containsEntry("xack", 40L);
        assertThat(d.totalCalls()).isEqualTo(100);
        assertThat(d.totalMicros()).isEqualTo(600 + 200 + 10);
        assertThat(d.cpuSeconds()).isCloseTo(1.25, within(1e-9));
    }

    @Test
    void nodesAreSummed() {
        ServerCounters two = ServerCounters.parse(BEFORE).plus(ServerCounters.parse(AFTER));
        assertThat(two.calls()).containsEntry("xreadgroup", 80L).containsEntry("xack", 40L);
        assertThat(two.cpuSeconds()).isCloseTo(8.75, within(1e-9));
    }
}
