package dev.runbus;

import dev.runbus.testing.RedisTarget;
import java.util.List;

/** {@link RedisAclTest} on Redis 6.2: the same ACLs, the older reply shapes and NOPERM texts. */
class RedisAclOnRedis62Test extends RedisAclTest {

    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }

    /**
     * Lettuce sends CLIENT SETINFO (a Redis 7.2 command) on connect and goes on when it is refused. Redis 7.0 refuses
     * it as an unknown subcommand before looking at the ACL; Redis 6.2 looks at the ACL first and logs it as a
     * denied CLIENT. The lists cannot allow it by name: Redis 7.0 refuses the rule {@code +client|setinfo}.
     */
    @Override
    List<String> deniedToTheClientLibrary() {
        return List.of("command client in toplevel");
    }
}
