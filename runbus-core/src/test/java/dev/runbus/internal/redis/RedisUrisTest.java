package dev.runbus.internal.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.runbus.Secrets;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

/** The Redis URLs runbus reads, and what their errors say (never a password). */
class RedisUrisTest {

    @Test
    void oneServer() {
        RedisUris.Target t = RedisUris.parse("redis://:pw@cache:6380/2");
        assertThat(t.cluster()).isFalse();
        assertThat(t.seeds()).singleElement().satisfies(u -> {
            assertThat(u.getHost()).isEqualTo("cache");
            assertThat(u.getPort()).isEqualTo(6380);
            assertThat(u.getDatabase()).isEqualTo(2);
        });
        assertThat(t.where()).isEqualTo("cache:6380");
    }

    @Test
    void sentinel() {
        RedisUris.Target t = RedisUris.parse("redis-sentinel://s1:26379,s2:26380#main");
        assertThat(t.cluster()).isFalse();
        RedisURI u = t.seeds().get(0);
        assertThat(u.getSentinelMasterId()).isEqualTo("main");
        assertThat(u.getSentinels()).extracting(RedisURI::getPort).containsExactly(26379, 26380);
        assertThat(t.where()).isEqualTo("Sentinels s1:26379,s2:26380, master main");
    }

    @Test
    void clusterSeedsCarryCredentialsAndOptions() {
        RedisUris.Target t = RedisUris.parse("redis-cluster://user:pw@n1:7000,n2,n3:7002?timeout=5s");
        assertThat(t.cluster()).isTrue();
        assertThat(t.seeds()).extracting(RedisURI::getHost).containsExactly("n1", "n2", "n3");
        assertThat(t.seeds()).extracting(RedisURI::getPort).containsExactly(7000, 6379, 7002);
        assertThat(t.seeds()).allSatisfy(u -> {
            assertThat(u.getCredentialsProvider().resolveCredentials().block().getUsername()).isEqualTo("user");
            assertThat(u.getTimeout().toMillis()).isEqualTo(5000);
            assertThat(u.isSsl()).isFalse();
        });
        assertThat(t.where()).isEqualTo("Redis Cluster n1:7000,n2:6379,n3:7002");
        assertThat(RedisUris.parse("rediss-cluster://n1:7000").seeds().get(0).isSsl()).isTrue();
        assertThat(RedisUris.parse("redis-cluster://n1:7000/0").seeds()).hasSize(1);
    }

    /**
     * Lettuce sends CLIENT SETINFO for a non-empty library name or version; the documented ACLs do not allow it
     * (RedisAclTest checks on each server that Redis denies nothing), unless a URL asks for it.
     */
    @Test
    void noLibraryNameOrVersionUnlessTheUrlSetsThem() {
        for (String url : new String[] {"redis://cache:6380", "redis-sentinel://s1,s2#main",
                "redis-cluster://n1:7000,n2?timeout=5s", "rediss://cache?clientName=x"}) {
            assertThat(RedisUris.parse(url).seeds()).as(url).allSatisfy(u -> {
                assertThat(u.getLibraryName()).isEmpty();
                assertThat(u.getLibraryVersion()).isEmpty();
            });
        }
        RedisURI named = RedisUris.parse("redis://cache?timeout=5s&libraryName=billing").seeds().get(0);
        assertThat(named.getLibraryName()).isEqualTo("billing");
        assertThat(named.getLibraryVersion()).isEmpty();
        assertThat(RedisUris.parse("redis-cluster://n1,n2?LIBRARYVERSION=2.1").seeds())
                .extracting(RedisURI::getLibraryVersion).containsExactly("2.1", "2.1");
    }

    @Test
    void badUrlsAreNamedWithoutTheirPassword() {
        assertThatThrownBy(() -> RedisUris.parse("redis-cluster://s3cret@n1:7000/3"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("database 0")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> RedisUris.parse("redis-cluster://:s3cret@n1:7000,,n2"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> RedisUris.parse("http://:s3cret@n1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("redis-cluster://")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> RedisUris.parse(" ")).isInstanceOf(IllegalArgumentException.class);
        for (String url : new String[] {"redis-cluster://:pa/ss@h1:7000", "redis://user:p@ss@h:6380/0",
                "redis-sentinel://:pa/ss@h1,h2#m", "redis://:a?b@h"}) {
            assertThatThrownBy(() -> RedisUris.parse(url)).as(url).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("percent-encode").hasMessageNotContaining("pa/ss")
                    .hasMessageNotContaining("p@ss").hasMessageNotContaining("a?b");
        }
        assertThat(RedisUris.parse("redis-cluster://:pa%2Fss@h1:7000").seeds()).singleElement()
                .satisfies(u -> assertThat(u.getHost()).isEqualTo("h1"));
    }

    @Test
    void secretsAreMasked() {
        assertThat(Secrets.mask("redis://:pw@h:1")).isEqualTo("redis://:****@h:1");
        assertThat(Secrets.mask("redis://user:pw@h:1")).isEqualTo("redis://user:****@h:1");
        assertThat(Secrets.mask("redis://pw@h:1")).isEqualTo("redis://****@h:1");
        assertThat(Secrets.mask("redis-cluster://pw@a:1,b:2")).isEqualTo("redis-cluster://****@a:1,b:2");
        assertThat(Secrets.mask("jdbc:postgresql://h/db?user=u&password=pw")).endsWith("password=****");
        assertThat(Secrets.mask("redis://h:1")).isEqualTo("redis://h:1");
        assertThat(Secrets.mask("redis://user:pa/ss@h:6380/0")).isEqualTo("redis://user:****@h:6380/0");
        assertThat(Secrets.mask("redis://user:p@ss@h")).isEqualTo("redis://user:****@h");
        assertThat(Secrets.mask("redis-sentinel://:pa/ss@h1,h2#m")).isEqualTo("redis-sentinel://:****@h1,h2#m");
    }
}
