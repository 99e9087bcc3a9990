package dev.runbus;

import dev.runbus.testing.RedisAcl;
import dev.runbus.testkit.RedisTarget;
import java.util.List;

/**
 * {@link RedisAclTest} on Redis 6.2: the lists with EVAL and EVALSHA instead of FCALL (6.2 has no functions), the
 * older reply shapes and NOPERM texts.
 */
class RedisAclOnRedis62Test extends RedisAclTest {

    @Override
    String workerCommands() {
        return RedisAcl.WORKER_COMMANDS_62;
    }

    @Override
    String publisherCommands() {
        return RedisAcl.PUBLISHER_COMMANDS_62;
    }

    @Override
    RedisTarget target() {
        return RedisTarget.embedded62();
    }

    /**
     * Lettuce asks for maintenance notifications on connect ({@code CLIENT MAINT_NOTIFICATIONS}, for servers that
     * announce their maintenance; none of the versions tested here knows it) and goes on when it is refused.
     * Redis 6.2 looks at the ACL before the subcommand and logs it as a denied CLIENT; 7.0 and later refuse the
     * unknown subcommand first. (Lettuce's CLIENT SETINFO, logged the same way, runbus turns off; this entry
     * cannot tell the two apart.)
     */
    @Override
    List<String> deniedToTheClientLibrary() {
        return List.of("command client in toplevel");
    }
}
