package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which failures to connect are worth another attempt while serve or worker starts. */
class DatabasePoolTest {

    @Test
    void aUrlNoDriverTakesIsNotTriedAgain() {
        // What HikariCP throws when DriverManager finds no driver for the URL.
        RuntimeException noDriver = new RuntimeException("Failed to get driver instance for jdbcUrl=jdbc:postgres://h/db",
                new SQLException("No suitable driver", "08001"));
        assertThat(DatabasePool.isPermanent(noDriver)).isTrue();
        // The same SQLState from pgjdbc means the server did not answer: a server still starting may yet.
        assertThat(DatabasePool.isPermanent(new SQLException("Connection to 127.0.0.1:1 refused", "08001"))).isFalse();
    }

    @Test
    void aUserAndPasswordInTheUrlsAuthorityAreRefusedNamingTheWayThatWorks() {
        assertThatThrownBy(() -> DatabasePool.open("jdbc:postgresql://postgres:s3cret@127.0.0.1:5432/test",
                Optional.empty(), 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("takes the user and password as parameters")
                .hasMessageContaining("?user=NAME")
                .hasMessageNotContaining("s3cret");
        assertThat(DatabasePool.hasUserInfo("jdbc:postgresql://db:5432/app?user=a&password=p@ss")).isFalse();
        assertThat(DatabasePool.hasUserInfo("jdbc:postgresql://h1:5432,h2:5432/app")).isFalse();
        assertThat(DatabasePool.hasUserInfo("jdbc:postgresql://app@db/app")).isTrue();
    }

    @Test
    void aUrlNoDriverTakesFailsNamingTheReasonWithItsPasswordMasked() {
        assertThatThrownBy(() -> DatabasePool.open("jdbc:postgres://127.0.0.1:5432/test?user=postgres&password=s3cret",
                Optional.empty(), 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("No suitable driver")
                .hasMessageNotContaining("s3cret");
    }
}
