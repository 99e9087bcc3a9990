package dev.runbus.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.Message;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The stream fields of a message (docs/wire-format.md). Pure logic: no Redis needed. */
class WireFormatTest {

    @Test
    void roundTrip() {
        Message m = Message.builder("order.created", new byte[] {1, 2, 3}).id("o-1").header("tenant", "acme")
                .publishedAt(Instant.ofEpochMilli(1_700_000_000_123L)).build();
        Map<String, byte[]> fields = WireFormat.encode(m);
        assertThat(fields.keySet()).containsExactly("id", "type", "payload", "published_at", "h:tenant");
        assertThat(new String(fields.get("published_at"), StandardCharsets.UTF_8)).isEqualTo("1700000000123");
        assertThat(WireFormat.decode("1700000000200-0", fields)).isEqualTo(m);
    }

    @Test
    void aFlowKeyTravelsAsFlowKey_andOneNoPublisherCouldGiveIsIgnored() {
        Message m = Message.builder("job", new byte[] {1}).id("j-1").flowKey("tenant-42")
                .publishedAt(Instant.ofEpochMilli(1_700_000_000_123L)).build();
        Map<String, byte[]> fields = WireFormat.encode(m);
        assertThat(new String(fields.get("flow_key"), StandardCharsets.UTF_8)).isEqualTo("tenant-42");
        assertThat(WireFormat.decode("1700000000200-0", fields)).isEqualTo(m);

        fields.put("flow_key", "a\0b".getBytes(StandardCharsets.UTF_8)); // written by another program
        assertThat(WireFormat.decode("1700000000200-0", fields).flowKey()).isNull();
        fields.put("flow_key", "k".repeat(257).getBytes(StandardCharsets.UTF_8));
        assertThat(WireFormat.flowKey(fields)).isNull();
    }

    @Test
    void foreignEntryWithOnlyAPayloadDecodesWithDefaults() {
        Map<String, byte[]> fields = new LinkedHashMap<>();
        fields.put("payload", "hello".getBytes(StandardCharsets.UTF_8));
        fields.put("something_else", "ignored".getBytes(StandardCharsets.UTF_8));
        Message m = WireFormat.decode("1700000000999-3", fields);
        assertThat(m.id()).isEqualTo("1700000000999-3");
        assertThat(m.type()).isEmpty();
        assertThat(m.payload()).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
        assertThat(m.publishedAt()).isEqualTo(Instant.ofEpochMilli(1_700_000_000_999L));
        assertThat(m.headers()).isEmpty();
    }

    @Test
    void unparsablePublishTimeFallsBackToTheStreamId() {
        Map<String, byte[]> fields = new LinkedHashMap<>();
        fields.put("published_at", "yesterday".getBytes(StandardCharsets.UTF_8));
        assertThat(WireFormat.decode("42-0", fields).publishedAt()).isEqualTo(Instant.ofEpochMilli(42));
    }
}
