package dev.runbus.internal.scripts;

import dev.runbus.RunbusException;

/**
 * A call kept in order with the caller's other commands ({@link ScriptCalls#runInOrder}) that a master answered
 * "Function not found": it did not run, and is not sent again, since a second send would come after what the
 * caller sent meanwhile. The library is loaded by the time this is reported, so the caller's next call runs.
 */
public final class ScriptNotRun extends RunbusException {

    ScriptNotRun(String script, Throwable cause) {
        super("script " + script + " did not run: the master had lost runbus's function library, which is loaded "
                + "again; the next call runs", cause);
    }
}
