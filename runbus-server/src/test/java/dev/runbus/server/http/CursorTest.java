package dev.runbus.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CursorTest {

    @Test
    void aCursorGivesBackItsPosition() {
        String cursor = Cursor.of("dead-letters", "1700000000000-0@3");
        assertThat(cursor).doesNotContain("1700000000000").matches("[A-Za-z0-9_-]+");
        assertThat(Cursor.position(cursor, "dead-letters")).isEqualTo("1700000000000-0@3");
        assertThat(Cursor.position(null, "dead-letters")).isNull();
    }

    @Test
    void anotherListingsCursorOrGarbageIsTheClientsMistake() {
        String streams = Cursor.of("streams", "orders");
        for (String bad : new String[] {streams, "%%%", "", "x".repeat(1000), Cursor.of("dead-letters", "")}) {
            assertThatThrownBy(() -> Cursor.position(bad, "dead-letters")).isInstanceOfSatisfying(ApiError.class,
                    e -> {
                        assertThat(e.status).isEqualTo(400);
                        assertThat(e.field).isEqualTo("cursor");
                    });
        }
    }
}
