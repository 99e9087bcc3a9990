package dev.runbus.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The entries a consumer holds, with when their claim was last renewed (System.nanoTime). */
final class InFlight {

    private final Map<String, Long> renewedAt = new ConcurrentHashMap<>();

    /** Holds the entry unless it is held already; returns whether it was taken. */
    boolean tryHold(String streamId) {
        return renewedAt.putIfAbsent(streamId, System.nanoTime()) == null;
    }

    void release(String streamId) {
        renewedAt.remove(streamId);
    }

    /** Ids whose claim was renewed before {@code nanoTime}. */
    List<String> renewedBefore(long nanoTime) {
        List<String> due = new ArrayList<>();
        renewedAt.forEach((id, at) -> {
            if (at - nanoTime < 0) {
                due.add(id);
            }
        });
        return due;
    }

    void renewed(List<String> ids, long nanoTime) {
        for (String id : ids) {
            renewedAt.computeIfPresent(id, (k, v) -> nanoTime);
        }
    }

    boolean contains(String streamId) {
        return renewedAt.containsKey(streamId);
    }

    int size() {
        return renewedAt.size();
    }
}
