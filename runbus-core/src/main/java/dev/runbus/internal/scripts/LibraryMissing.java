package dev.runbus.internal.scripts;

import dev.runbus.RunbusException;

/**
 * A master lacks runbus's function library and the bus's Redis user may not load it: nothing the bus can mend by
 * trying again, so the message says what the operator does.
 */
final class LibraryMissing extends RunbusException {

    LibraryMissing(FunctionLibrary library, String where, Throwable refusal) {
        super("runbus's Redis function library " + library.name() + " is not loaded on " + where + ", and this Redis "
                + "user may not load it (" + refusal.getMessage() + "). Load it once per runbus version with `runbus "
                + "migrate --redis-url …` as a user allowed +function|load (it loads every master of a cluster), or "
                + "grant this user +function|load; or set scriptMode EVAL, whose users need +eval +evalsha instead "
                + "(docs/security.md)", refusal);
    }
}
