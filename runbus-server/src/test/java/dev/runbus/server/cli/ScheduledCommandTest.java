package dev.runbus.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How far off a scheduled entry is due, as {@code runbus scheduled list} prints it. */
class ScheduledCommandTest {

    @Test
    void dueTimesInEachUnitBothWays() {
        Map<Duration, String> cases = new LinkedHashMap<>();
        cases.put(Duration.ofMillis(850), "in 850ms");
        cases.put(Duration.ofMillis(1_000), "in 1.0s");
        cases.put(Duration.ofMillis(1_250), "in 1.2s");
        cases.put(Duration.ofMillis(59_999), "in 59.9s");
        cases.put(Duration.ofMinutes(1), "in 1m 00s");
        cases.put(Duration.ofSeconds(4 * 60 + 5), "in 4m 05s");
        cases.put(Duration.ofMinutes(2 * 60 + 3).plusSeconds(59), "in 2h 03m");
        cases.put(Duration.ofHours(3 * 24 + 4), "in 3d 04h");
        cases.put(Duration.ZERO, "overdue by 0ms");
        cases.put(Duration.ofMillis(-1), "overdue by 1ms");
        cases.put(Duration.ofMillis(-1_250), "overdue by 1.2s");
        cases.put(Duration.ofSeconds(-125), "overdue by 2m 05s");
        cases.put(Duration.ofHours(-50), "overdue by 2d 02h");
        cases.forEach((untilDue, printed) -> assertThat(ScheduledCommand.relative(untilDue)).as(untilDue.toString())
                .isEqualTo(printed));
    }
}
