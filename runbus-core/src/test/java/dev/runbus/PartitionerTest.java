package dev.runbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The partition of a key is part of the wire format: other languages compute it too. The expected numbers were
 * computed independently with Python ({@code zlib.crc32(key.encode("utf-8")) % n}), never with this code; they
 * are written twice, here and in {@code partitioner-vectors.txt}, which docs/wire-format.md copies.
 */
class PartitionerTest {

    record Vector(String key, int partitions, int partition) {
    }

    static final List<Vector> VECTORS = List.of(
            new Vector("user-1", 16, 4), new Vector("user-1", 7, 5),
            new Vector("user-42", 16, 3), new Vector("user-42", 7, 1),
            new Vector("order:9001", 16, 4), new Vector("order:9001", 7, 6),
            new Vector("日本", 16, 12), new Vector("日本", 7, 0),
            new Vector("a", 16, 3), new Vector("a", 7, 4));

    @Test
    void hardCodedVectors() {
        for (Vector v : VECTORS) {
            assertThat(Partitioner.partitionOf(v.key(), v.partitions())).as(v.toString()).isEqualTo(v.partition());
        }
    }

    @Test
    void vectorFileMatchesTheHardCodedVectorsAndTheCode() throws IOException {
        List<Vector> fromFile = readVectorFile();
        assertThat(fromFile).containsExactlyElementsOf(VECTORS);
        for (Vector v : fromFile) {
            assertThat(Partitioner.partitionOf(v.key(), v.partitions())).as(v.toString()).isEqualTo(v.partition());
        }
    }

    @Test
    void oneOrMorePartitions() {
        assertThat(Partitioner.partitionOf("anything", 1)).isZero();
        assertThatThrownBy(() -> Partitioner.partitionOf("a", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("partitions must be from 1 to");
        assertThatThrownBy(() -> Partitioner.partitionOf("a", Partitioner.MAX_PARTITIONS + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static List<Vector> readVectorFile() throws IOException {
        List<Vector> out = new ArrayList<>();
        try (InputStream in = PartitionerTest.class.getResourceAsStream("/partitioner-vectors.txt")) {
            assertThat(in).as("partitioner-vectors.txt on the test class path").isNotNull();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t");
                assertThat(f).as("key<TAB>n<TAB>partition: " + line).hasSize(3);
                out.add(new Vector(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2])));
            }
        }
        return out;
    }
}
