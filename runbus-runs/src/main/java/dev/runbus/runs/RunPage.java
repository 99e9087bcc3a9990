package dev.runbus.runs;

import java.util.List;
import java.util.Optional;

/**
 * One page of {@link Runs#list}: its runs, newest first, and where the next page starts (empty when this page is
 * the last).
 */
public record RunPage(List<Run> runs, Optional<RunPosition> next) {

    public RunPage {
        runs = List.copyOf(runs);
    }
}
