package dev.runbus.runs;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A cron expression: five fields (minute, hour, day of month, month, day of week) or six (a second first), or one of
 * the macros {@code @yearly}, {@code @annually}, {@code @monthly}, {@code @weekly}, {@code @daily}, {@code @midnight},
 * {@code @hourly}. A field is {@code *}, a value, a range {@code a-b}, a step {@code *}{@code /n}, {@code a/n} or
 * {@code a-b/n}, or a comma-separated list of those; months and days of the week take their English three-letter
 * names, Sunday is 0 or 7, and {@code ?} stands for {@code *} in the two day fields. As in Vixie cron, when both day
 * fields are restricted (neither begins with {@code *}) a day matches either; otherwise both.
 *
 * <p><b>Daylight-saving time</b> follows Debian cron's rule (docs/schedules.md, "Daylight-saving time"): an expression
 * at a fixed time of day (neither its minute nor its hour field, nor its second field when it has one, begins with
 * {@code *}; {@code @hourly} does not count) fires once in a repeated hour, at the first of the two, and at the jump
 * for a time the clocks skip; a wildcard expression keeps real time: it fires at every instant whose wall-clock time
 * matches, twice in a repeated hour and never in a skipped one. {@link #next} applies it in the zone it is given.
 *
 * <p>Immutable and thread-safe.
 */
public final class CronExpression {

    private static final Map<String, String> MACROS = Map.of(
            "@yearly", "0 0 1 1 *", "@annually", "0 0 1 1 *", "@monthly", "0 0 1 * *", "@weekly", "0 0 * * 0",
            "@daily", "0 0 * * *", "@midnight", "0 0 * * *", "@hourly", "0 * * * *");
    private static final String[] MONTHS = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
        "NOV", "DEC"};
    private static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};
    /** How far ahead a next fire is looked for: leap days on one weekday (Feb 29 and a Monday) recur within 28 years. */
    private static final int SEARCH_YEARS = 30;
    /** The longest expression taken: far beyond any real one, so that a parse never reads an unbounded text. */
    public static final int MAX_LENGTH = 1_000;

    private final String text;
    private final BitSet seconds;
    private final BitSet minutes;
    private final BitSet hours;
    private final BitSet daysOfMonth;
    private final BitSet months;
    private final BitSet daysOfWeek;
    private final boolean dayOfMonthStar;
    private final boolean dayOfWeekStar;
    private final boolean fixedTime;

    private CronExpression(String text, String[] f, boolean withSeconds, boolean macroHourly) {
        this.text = text;
        int i = withSeconds ? 1 : 0;
        this.seconds = withSeconds ? field("second", f[0], 0, 59, null) : single(0);
        this.minutes = field("minute", f[i], 0, 59, null);
        this.hours = field("hour", f[i + 1], 0, 23, null);
        this.daysOfMonth = field("day-of-month", f[i + 2], 1, 31, null);
        this.months = field("month", f[i + 3], 1, 12, MONTHS);
        BitSet dow = field("day-of-week", f[i + 4], 0, 7, DAYS);
        if (dow.get(7)) {
            dow.set(0);
            dow.clear(7);
        }
        this.daysOfWeek = dow;
        this.dayOfMonthStar = star(f[i + 2]);
        this.dayOfWeekStar = star(f[i + 4]);
        this.fixedTime = !macroHourly && !star(f[i]) && !star(f[i + 1]) && !(withSeconds && star(f[0]));
        if (!canMatchADay()) {
            throw invalid("day-of-month " + f[i + 2] + " never falls in month " + f[i + 3]);
        }
    }

    /**
     * Parses {@code text}; throws {@link InvalidScheduleException} (field {@code cron}) naming the field and what is
     * wrong with it.
     */
    public static CronExpression parse(String text) {
        Objects.requireNonNull(text, "text");
        if (text.length() > MAX_LENGTH) {
            throw new InvalidScheduleException("cron", "has " + text.length() + " characters; at most " + MAX_LENGTH);
        }
        String trimmed = text.trim();
        if (trimmed.isEmpty()) {
            throw new InvalidScheduleException("cron", "is empty: give five fields (minute hour day-of-month month "
                    + "day-of-week), six (a second first) or a macro such as @daily");
        }
        String expanded = trimmed;
        boolean hourly = false;
        if (trimmed.startsWith("@")) {
            expanded = MACROS.get(trimmed.toLowerCase(Locale.ROOT));
            if (expanded == null) {
                throw new InvalidScheduleException("cron", "'" + trimmed + "' is not a macro; one of "
                        + new java.util.TreeSet<>(MACROS.keySet()));
            }
            hourly = trimmed.equalsIgnoreCase("@hourly");
        }
        String[] fields = expanded.split("\\s+");
        if (fields.length != 5 && fields.length != 6) {
            throw new InvalidScheduleException("cron", "has " + fields.length + " fields in '" + trimmed
                    + "': give five (minute hour day-of-month month day-of-week) or six (a second first)");
        }
        return new CronExpression(trimmed, fields, fields.length == 6, hourly);
    }

    /** The expression as it was given (trimmed). */
    @Override
    public String toString() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CronExpression c && c.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** Whether the expression fires at a fixed time of day, which decides how it meets daylight-saving time. */
    public boolean fixedTime() {
        return fixedTime;
    }

    /**
     * The first instant after {@code after} (strictly) at which the expression fires in {@code zone}, by the rule for
     * daylight-saving time above; empty when it never fires again within 30 years (e.g. {@code 0 0 30 2 *}).
     */
    public Optional<Instant> next(Instant after, ZoneId zone) {
        Objects.requireNonNull(after, "after");
        ZoneRules rules = Objects.requireNonNull(zone, "zone").getRules();
        // A wall-clock time before after's may still fire after it: the second pass of a repeated hour.
        LocalDateTime local = LocalDateTime.ofInstant(after, zone).minus(shiftNear(rules, after));
        LocalDateTime limit = LocalDateTime.ofInstant(after, zone).plusYears(SEARCH_YEARS);
        Instant best = null;
        LocalDateTime stop = null;
        for (LocalDateTime t = nextMatch(local, limit); t != null; t = nextMatch(t.plusSeconds(1), limit)) {
            if (stop != null && t.isAfter(stop)) {
                break;
            }
            for (Instant at : instants(rules, t)) {
                if (at.isAfter(after) && (best == null || at.isBefore(best))) {
                    best = at;
                    // No later wall-clock time than this can fall before it in real time.
                    stop = LocalDateTime.ofInstant(best, zone).plus(shiftNear(rules, best));
                }
            }
        }
        return Optional.ofNullable(best);
    }

    /** The next {@code n} fire instants after {@code after}, fewer when it stops firing. */
    public List<Instant> next(Instant after, ZoneId zone, int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be 0 or more, was " + n);
        }
        List<Instant> fires = new ArrayList<>(Math.min(n, 1_000));
        Instant at = after;
        while (fires.size() < n) {
            Optional<Instant> next = next(at, zone);
            if (next.isEmpty()) {
                break;
            }
            at = next.get();
            fires.add(at);
        }
        return fires;
    }

    /** The instants a matching wall-clock time fires at in a zone: one, both of a repeated hour, or the jump. */
    private List<Instant> instants(ZoneRules rules, LocalDateTime t) {
        List<ZoneOffset> offsets = rules.getValidOffsets(t);
        if (offsets.size() == 1) {
            return List.of(t.toInstant(offsets.get(0)));
        }
        if (offsets.isEmpty()) { // skipped by the clocks
            return fixedTime ? List.of(rules.getTransition(t).getInstant()) : List.of();
        }
        Instant first = t.toInstant(offsets.get(0));
        Instant second = t.toInstant(offsets.get(1));
        if (second.isBefore(first)) {
            Instant swap = first;
            first = second;
            second = swap;
        }
        return fixedTime ? List.of(first) : List.of(first, second);
    }

    /** The largest change of offset in the zone within two days of {@code at}: zero where the clocks never change. */
    private static Duration shiftNear(ZoneRules rules, Instant at) {
        if (rules.isFixedOffset()) {
            return Duration.ZERO;
        }
        Duration most = Duration.ZERO;
        Instant end = at.plus(Duration.ofDays(2));
        for (ZoneOffsetTransition t = rules.nextTransition(at.minus(Duration.ofDays(2)));
                t != null && t.getInstant().isBefore(end); t = rules.nextTransition(t.getInstant())) {
            Duration d = t.getDuration().abs();
            if (d.compareTo(most) > 0) {
                most = d;
            }
        }
        return most;
    }

    /** The first wall-clock time at or after {@code from} (rounded up to the second) that matches, or null past limit. */
    private LocalDateTime nextMatch(LocalDateTime from, LocalDateTime limit) {
        LocalDateTime t = from.getNano() == 0 ? from : from.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
        while (!t.isAfter(limit)) {
            if (!months.get(t.getMonthValue())) {
                int m = months.nextSetBit(t.getMonthValue());
                LocalDate first = t.toLocalDate().withDayOfMonth(1);
                t = (m < 0 ? first.plusYears(1).withMonth(months.nextSetBit(1)) : first.withMonth(m)).atStartOfDay();
                continue;
            }
            if (!dayMatches(t.toLocalDate())) {
                t = t.toLocalDate().plusDays(1).atStartOfDay();
                continue;
            }
            int h = hours.nextSetBit(t.getHour());
            if (h < 0) {
                t = t.toLocalDate().plusDays(1).atStartOfDay();
                continue;
            }
            if (h != t.getHour()) {
                t = t.toLocalDate().atTime(h, 0);
                continue;
            }
            int m = minutes.nextSetBit(t.getMinute());
            if (m < 0) {
                t = t.truncatedTo(ChronoUnit.HOURS).plusHours(1);
                continue;
            }
            if (m != t.getMinute()) {
                t = t.truncatedTo(ChronoUnit.HOURS).withMinute(m);
                continue;
            }
            int s = seconds.nextSetBit(t.getSecond());
            if (s < 0) {
                t = t.truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
                continue;
            }
            return t.withSecond(s);
        }
        return null;
    }

    private boolean dayMatches(LocalDate date) {
        boolean dom = daysOfMonth.get(date.getDayOfMonth());
        boolean dow = daysOfWeek.get(date.getDayOfWeek() == DayOfWeek.SUNDAY ? 0 : date.getDayOfWeek().getValue());
        if (dayOfMonthStar || dayOfWeekStar) {
            return dom && dow;
        }
        return dom || dow;
    }

    /** False for a day of month no chosen month has (30 February), when the day of the week does not widen it. */
    private boolean canMatchADay() {
        if (!dayOfMonthStar && !dayOfWeekStar) {
            return true;
        }
        for (int m = months.nextSetBit(1); m >= 0; m = months.nextSetBit(m + 1)) {
            int longest = java.time.Month.of(m).maxLength();
            int d = daysOfMonth.nextSetBit(1);
            if (d >= 0 && d <= longest) {
                return true;
            }
        }
        return false;
    }

    private static boolean star(String field) {
        return field.startsWith("*") || field.startsWith("?");
    }

    private static BitSet single(int value) {
        BitSet b = new BitSet();
        b.set(value);
        return b;
    }

    private InvalidScheduleException invalid(String problem) {
        return new InvalidScheduleException("cron", problem + " in '" + text + "'");
    }

    private BitSet field(String name, String field, int min, int max, String[] names) {
        BitSet set = new BitSet(max + 1);
        for (String part : field.split(",", -1)) {
            if (part.isEmpty()) {
                throw invalid(name + " field '" + field + "' has an empty item");
            }
            String range = part;
            int step = 1;
            int slash = part.indexOf('/');
            if (slash >= 0) {
                range = part.substring(0, slash);
                step = number(name, part.substring(slash + 1), null, "step");
                if (step < 1) {
                    throw invalid(name + " step in '" + part + "' must be 1 or more");
                }
            }
            int from;
            int to;
            if (range.equals("*") || range.equals("?")) {
                if (range.equals("?") && !name.startsWith("day-of")) {
                    throw invalid("'?' is for the day fields only, not the " + name + " field");
                }
                from = min;
                to = max == 7 ? 6 : max;
            } else {
                int dash = range.indexOf('-', 1);
                from = number(name, dash < 0 ? range : range.substring(0, dash), names, "value");
                to = dash < 0 ? (slash >= 0 ? (max == 7 ? 6 : max) : from) : number(name, range.substring(dash + 1),
                        names, "value");
                for (int v : new int[] {from, to}) {
                    if (v < min || v > max) {
                        throw invalid(name + " value " + v + " in '" + part + "' is outside " + min + "-" + max);
                    }
                }
                if (from > to) {
                    throw invalid(name + " range '" + range + "' runs backwards: write it as two ranges");
                }
            }
            for (int v = from; v <= to; v += step) {
                set.set(v);
            }
        }
        return set;
    }

    private int number(String name, String token, String[] names, String what) {
        if (names != null) {
            for (int i = 0; i < names.length; i++) {
                if (names[i].equalsIgnoreCase(token)) {
                    return names == MONTHS ? i + 1 : i;
                }
            }
        }
        if (token.isEmpty() || token.length() > 4 || !token.chars().allMatch(Character::isDigit)) {
            throw invalid(name + " " + what + " '" + token + "' is not a number" + (names == null ? ""
                    : " nor a name (" + String.join(", ", names) + ")"));
        }
        return Integer.parseInt(token);
    }
}
