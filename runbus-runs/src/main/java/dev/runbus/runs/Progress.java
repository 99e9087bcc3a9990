package dev.runbus.runs;

import java.time.Instant;

/**
 * A running run's latest progress as stored ({@link RunContext#progress(int, String)}): written at most once a second
 * per run, so up to a second behind the handler's last report.
 *
 * @param percent 0 to 100
 * @param details what the handler said, or null
 * @param at      when it was written (PostgreSQL's clock)
 */
public record Progress(int percent, String details, Instant at) {
}
