package dev.runbus.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.SlotHash;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The hash tags of partitions: Redis Cluster's slot function, exact targets, and their spread. */
class SlotTagsTest {

    @Test
    void slotIsRedisClustersSlot() {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 10_000; i++) {
            String s = Integer.toString(random.nextInt(), 36) + "#" + i + (i % 3 == 0 ? "日本" : "");
            assertThat(SlotTags.slot(s)).as(s).isEqualTo(SlotHash.getSlot(s));
        }
        assertThat(SlotTags.slot("123456789")).isEqualTo(0x31c3 & 16383); // CRC16/XMODEM check value
    }

    @Test
    void eachTagHashesToItsTargetSlot() {
        for (String topic : new String[] {"orders", "runs", "a", "日本"}) {
            for (int n : new int[] {2, 3, 6, 16, 1024}) {
                for (int p = 0; p < n; p++) {
                    String tag = SlotTags.tag(topic, p, n);
                    assertThat(tag).startsWith(topic + "#" + p + ".");
                    assertThat(SlotHash.getSlot(tag)).isEqualTo(SlotTags.targetSlot(topic, p, n));
                }
            }
        }
    }

    @Test
    void targetsAreEvenlySpacedSoEveryMasterOfAnEvenSplitGetsOne() {
        SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < 2_000; i++) {
            String topic = "t" + Long.toString(random.nextLong(), 36);
            int masters = 1 + random.nextInt(12);
            int n = masters + random.nextInt(40);
            int[] perMaster = new int[masters];
            for (int p = 0; p < n; p++) {
                int slot = SlotTags.targetSlot(topic, p, n);
                for (int m = 0; m < masters; m++) { // master m holds [m * 16384 / masters, (m + 1) * 16384 / masters)
                    if (slot >= m * SlotTags.SLOTS / masters && slot < (m + 1) * SlotTags.SLOTS / masters) {
                        perMaster[m]++;
                    }
                }
            }
            for (int m = 0; m < masters; m++) {
                assertThat(perMaster[m]).as("%s: %d partitions, %d masters, master %d", topic, n, masters, m)
                        .isPositive();
            }
        }
    }

    @Test
    void vectorsOfTheWireFormat() {
        assertThat(SlotTags.tag("orders", 0, 16)).isEqualTo(VECTOR_ORDERS_0);
        assertThat(SlotTags.tag("orders", 3, 16)).isEqualTo(VECTOR_ORDERS_3);
        assertThat(SlotTags.tag("runs", 1, 6)).isEqualTo(VECTOR_RUNS_1);
    }

    // The tags docs/wire-format.md gives, so that another client can check its own.
    private static final String VECTOR_ORDERS_0 = "orders#0.4085";
    private static final String VECTOR_ORDERS_3 = "orders#3.3423";
    private static final String VECTOR_RUNS_1 = "runs#1.3670";
}
