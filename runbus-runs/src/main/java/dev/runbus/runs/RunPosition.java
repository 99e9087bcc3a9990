package dev.runbus.runs;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * Where a page of {@link Runs#list} ended: its last run's creation time and id. The next page starts after it in
 * the listing's order (newest first; among runs created at the same instant, by id descending as
 * PostgreSQL orders UUIDs, byte by byte), so runs created
 * meanwhile never shift a page the way an offset would.
 */
public record RunPosition(Instant createdAt, UUID id) {

    public RunPosition {
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(id, "id");
    }
}
