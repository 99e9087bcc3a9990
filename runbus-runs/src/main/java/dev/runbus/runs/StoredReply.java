package dev.runbus.runs;

import java.time.Instant;

/** A reply as stored: its sequence number within the run, role, content and when it was written. */
public record StoredReply(int seq, String role, String content, Instant createdAt) {
}
