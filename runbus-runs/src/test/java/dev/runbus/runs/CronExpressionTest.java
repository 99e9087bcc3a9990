package dev.runbus.runs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Cron expressions: the fields, the errors, and daylight-saving time by Debian cron's rule (docs/schedules.md). */
class CronExpressionTest {

    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");
    private static final ZoneId LONDON = ZoneId.of("Europe/London");

    /** The fires within one local day (from its midnight to the next), in real time. */
    private static List<Instant> firesOn(String cron, ZoneId zone, LocalDate day) {
        Instant from = day.atStartOfDay(zone).toInstant();
        Instant to = day.plusDays(1).atStartOfDay(zone).toInstant();
        CronExpression c = CronExpression.parse(cron);
        List<Instant> fires = new ArrayList<>();
        Instant at = from.minusSeconds(1);
        for (Optional<Instant> next = c.next(at, zone); next.isPresent() && next.get().isBefore(to);
                next = c.next(next.get(), zone)) {
            fires.add(next.get());
        }
        return fires;
    }

    /**
     * The table of docs/schedules.md: 2026's changes in New York (8 March 02:00 → 03:00, 1 November 02:00 → 01:00)
     * and London (29 March 01:00 → 02:00, 25 October 02:00 → 01:00), and a day without a change. Fixed-time
     * expressions fire once, at the jump when their time is skipped; wildcard ones keep real time (23 and 25 hours).
     */
    @ParameterizedTest(name = "{0} on {1} {2}: {3} fires, first {4}")
    @CsvSource({
        "30 2 * * *,    America/New_York, 2026-03-08, 1,   2026-03-08T07:00:00Z",
        "30 2 * * *,    America/New_York, 2026-11-01, 1,   2026-11-01T07:30:00Z",
        "30 2 * * *,    America/New_York, 2026-06-01, 1,   2026-06-01T06:30:00Z",
        "30 1 * * *,    America/New_York, 2026-11-01, 1,   2026-11-01T05:30:00Z",
        "0 * * * *,     America/New_York, 2026-03-08, 23,  2026-03-08T05:00:00Z",
        "0 * * * *,     America/New_York, 2026-11-01, 25,  2026-11-01T04:00:00Z",
        "0 * * * *,     America/New_York, 2026-06-01, 24,  2026-06-01T04:00:00Z",
        "*/15 * * * *,  America/New_York, 2026-03-08, 92,  2026-03-08T05:00:00Z",
        "*/15 * * * *,  America/New_York, 2026-11-01, 100, 2026-11-01T04:00:00Z",
        "*/15 * * * *,  America/New_York, 2026-06-01, 96,  2026-06-01T04:00:00Z",
        "30 2 * * *,    Europe/London,    2026-03-29, 1,   2026-03-29T01:30:00Z",
        "30 2 * * *,    Europe/London,    2026-10-25, 1,   2026-10-25T02:30:00Z",
        "30 1 * * *,    Europe/London,    2026-03-29, 1,   2026-03-29T01:00:00Z",
        "30 1 * * *,    Europe/London,    2026-10-25, 1,   2026-10-25T00:30:00Z",
        "0 * * * *,     Europe/London,    2026-03-29, 23,  2026-03-29T00:00:00Z",
        "0 * * * *,     Europe/London,    2026-10-25, 25,  2026-10-24T23:00:00Z",
        "*/15 * * * *,  Europe/London,    2026-03-29, 92,  2026-03-29T00:00:00Z",
        "*/15 * * * *,  Europe/London,    2026-10-25, 100, 2026-10-24T23:00:00Z",
        "'0,30 2 * * *', America/New_York, 2026-03-08, 1,   2026-03-08T07:00:00Z",
    })
    void daylightSavingTime(String cron, String zone, String day, int count, String first) {
        List<Instant> fires = firesOn(cron.trim(), ZoneId.of(zone.trim()), LocalDate.parse(day.trim()));
        assertThat(fires).hasSize(count);
        assertThat(fires.get(0)).isEqualTo(Instant.parse(first.trim()));
        assertThat(fires).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void aWildcardFiresInBothPassesOfARepeatedHour_inRealTimeOrder() {
        CronExpression c = CronExpression.parse("*/15 * * * *");
        // 01:45 EDT, the last quarter of the first pass; next is 01:00 EST, the first of the second pass
        assertThat(c.next(Instant.parse("2026-11-01T05:45:00Z"), NEW_YORK)).contains(Instant.parse("2026-11-01T06:00:00Z"));
        assertThat(c.next(Instant.parse("2026-11-01T05:50:00Z"), NEW_YORK)).contains(Instant.parse("2026-11-01T06:00:00Z"));
        // a fixed-time expression inside the repeated hour fires in its first pass only
        CronExpression fixed = CronExpression.parse("45 1 * * *");
        assertThat(fixed.next(Instant.parse("2026-11-01T05:46:00Z"), NEW_YORK))
                .contains(Instant.parse("2026-11-02T06:45:00Z"));
        assertThat(fixed.fixedTime()).isTrue();
        assertThat(c.fixedTime()).isFalse();
        assertThat(CronExpression.parse("@hourly").fixedTime()).isFalse();
        assertThat(CronExpression.parse("@daily").fixedTime()).isTrue();
    }

    @Test
    void fieldsRangesStepsListsAndNames() {
        ZoneId utc = ZoneOffset.UTC;
        Instant monday = Instant.parse("2026-06-01T00:00:00Z"); // a Monday
        assertThat(CronExpression.parse("0 9-17/4 * * MON-FRI").next(monday, utc, 4)).containsExactly(
                Instant.parse("2026-06-01T09:00:00Z"), Instant.parse("2026-06-01T13:00:00Z"),
                Instant.parse("2026-06-01T17:00:00Z"), Instant.parse("2026-06-02T09:00:00Z"));
        assertThat(CronExpression.parse("0 0 * * sun").next(monday, utc)).contains(Instant.parse("2026-06-07T00:00:00Z"));
        assertThat(CronExpression.parse("0 0 * * 7").next(monday, utc)).contains(Instant.parse("2026-06-07T00:00:00Z"));
        assertThat(CronExpression.parse("0 0 1 jan,jul *").next(monday, utc)).contains(Instant.parse("2026-07-01T00:00:00Z"));
        assertThat(CronExpression.parse("15,45 * * * * *").next(monday, utc, 2)).containsExactly(
                Instant.parse("2026-06-01T00:00:15Z"), Instant.parse("2026-06-01T00:00:45Z"));
        // both day fields restricted: either matches (the 13th, or a Friday)
        assertThat(CronExpression.parse("0 0 13 * 5").next(monday, utc, 2)).containsExactly(
                Instant.parse("2026-06-05T00:00:00Z"), Instant.parse("2026-06-12T00:00:00Z"));
        // one of them a star (or beginning with one, as in Vixie cron): both must
        assertThat(CronExpression.parse("0 0 13 * ?").next(monday, utc)).contains(Instant.parse("2026-06-13T00:00:00Z"));
        assertThat(CronExpression.parse("0 0 */2 * 5").next(monday, utc, 3)).as("odd days that are Fridays")
                .containsExactly(Instant.parse("2026-06-05T00:00:00Z"), Instant.parse("2026-06-19T00:00:00Z"),
                        Instant.parse("2026-07-03T00:00:00Z"));
        assertThat(CronExpression.parse("0 0 29 2 *").next(monday, utc)).contains(Instant.parse("2028-02-29T00:00:00Z"));
        assertThat(CronExpression.parse("@yearly").next(monday, utc)).contains(Instant.parse("2027-01-01T00:00:00Z"));
        assertThat(CronExpression.parse("0 0 31 4 1").next(monday, utc)).as("April has no 31st: Mondays of April")
                .contains(Instant.parse("2027-04-05T00:00:00Z"));
        // strictly after
        assertThat(CronExpression.parse("0 0 * * *").next(Instant.parse("2026-06-01T00:00:00Z"), utc))
                .contains(Instant.parse("2026-06-02T00:00:00Z"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "61 * * * *|minute value 61 in '61' is outside 0-59",
        "* * *|has 3 fields",
        "@often|'@often' is not a macro",
        "0 0 30 2 *|day-of-month 30 never falls in month 2",
        "5-1 * * * *|minute range '5-1' runs backwards",
        "*/0 * * * *|minute step in '*/0' must be 1 or more",
        "0 0 * * FOO|day-of-week value 'FOO' is not a number nor a name",
        "? * * * *|'?' is for the day fields only",
        "1,,2 * * * *|minute field '1,,2' has an empty item",
        "0 24 * * *|hour value 24 in '24' is outside 0-23",
        "\" \"|is empty",
    })
    void badExpressionsAreRefusedNamingTheField(String cron, String problem) {
        assertThatThrownBy(() -> CronExpression.parse(cron)).isInstanceOf(InvalidScheduleException.class)
                .hasMessageStartingWith("cron ").hasMessageContaining(problem)
                .satisfies(e -> assertThat(((InvalidScheduleException) e).field()).isEqualTo("cron"));
    }

    @Test
    void aTooLongTextIsRefusedBeforeItIsRead() {
        assertThatThrownBy(() -> CronExpression.parse("0".repeat(CronExpression.MAX_LENGTH + 1)))
                .isInstanceOf(InvalidScheduleException.class).hasMessageContaining("at most 1000");
    }

    @Test
    void previewOfTheNextFires() {
        assertThat(CronExpression.parse("0 12 * * *").next(Instant.parse("2026-03-07T12:00:00Z"), NEW_YORK, 3))
                .containsExactly(Instant.parse("2026-03-07T17:00:00Z"), Instant.parse("2026-03-08T16:00:00Z"),
                        Instant.parse("2026-03-09T16:00:00Z"));
        assertThat(CronExpression.parse("0 12 * * *").next(Instant.EPOCH, LONDON, 0)).isEmpty();
    }
}
