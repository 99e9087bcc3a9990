package dev.runbus.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The entries a consumer holds, one {@link Hold} per delivery it is running, with when its claim was last
 * renewed (System.nanoTime).
 *
 * <p>A hold belongs to one delivery. After a lost claim the same consumer can take the entry back and run it
 * again while the first run still goes on; each run then has its own hold, and whatever one run does with
 * its hold (release it when it settles, renew or drop it in the keep-alive) never touches the other's.
 */
final class InFlight {

    /** One delivery's hold on an entry; compared by identity. */
    static final class Hold {
        private final String streamId;
        /** False for an entry acked before its handler runs: there is no claim to keep. */
        private final boolean keptAlive;
        private volatile long renewedAt;

        private Hold(String streamId, boolean keptAlive, long renewedAt) {
            this.streamId = streamId;
            this.keptAlive = keptAlive;
            this.renewedAt = renewedAt;
        }

        String streamId() {
            return streamId;
        }
    }

    private final Map<String, Hold> holds = new ConcurrentHashMap<>();

    /**
     * Holds the entry for one delivery unless it is held already; returns the hold, or null if not taken.
     * {@code keptAlive} is false for an entry already acked (ack before work): it counts as in flight, but
     * the keep-alive leaves it alone, since it would only find it no longer pending.
     */
    Hold tryHold(String streamId, boolean keptAlive) {
        Hold h = new Hold(streamId, keptAlive, System.nanoTime());
        return holds.putIfAbsent(streamId, h) == null ? h : null;
    }

    /** Lets go of this hold; returns false when it was not held any more (released, or replaced by another). */
    boolean release(Hold h) {
        return holds.remove(h.streamId, h);
    }

    /**
     * Lets go of any hold of these entries, which were deleted from the stream and acked (Redis 7.0's
     * XAUTOCLAIM drops deleted entries however short their idle time): there is nothing left to keep alive
     * and no outcome left to apply.
     */
    void releaseTrimmed(List<String> streamIds) {
        streamIds.forEach(holds::remove);
    }

    /** The holds kept alive whose claim was renewed before {@code nanoTime}. */
    List<Hold> renewedBefore(long nanoTime) {
        List<Hold> due = new ArrayList<>();
        holds.values().forEach(h -> {
            if (h.keptAlive && h.renewedAt - nanoTime < 0) {
                due.add(h);
            }
        });
        return due;
    }

    void renewed(List<Hold> renewed, long nanoTime) {
        renewed.forEach(h -> h.renewedAt = nanoTime);
    }

    int size() {
        return holds.size();
    }
}
