package dev.runbus.runs.internal.store;

import dev.runbus.runs.Run;

/**
 * A failure's text as the runs layer stores and reads it: control characters other than newline and tab removed,
 * then cut to {@link Run#MAX_ERROR_LENGTH} characters ending in "…". The text comes from a handler's exception (or
 * a dead letter's reason made from one) and is shown to every reader of the run: over HTTP to read tokens, in
 * terminals by the CLI, where an escape sequence would act. Stored so, PostgreSQL never holds a megabyte message
 * written again on every attempt, nor refuses the write over a NUL (which left the run unmarked). Read so, rows
 * stored before the rule are shown by it too. Newline and tab stay: multi-line messages are common and harmless
 * in JSON, which escapes them.
 */
public final class ErrorText {

    private static final char CUT = '…';

    private ErrorText() {
    }

    /** {@code null} stays {@code null}. */
    public static String clean(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder b = new StringBuilder(Math.min(text.length(), Run.MAX_ERROR_LENGTH));
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!Character.isISOControl(c) || c == '\n' || c == '\t') {
                b.append(c);
            }
        }
        if (b.length() <= Run.MAX_ERROR_LENGTH) {
            return b.toString();
        }
        int keep = Run.MAX_ERROR_LENGTH - 1;
        if (Character.isHighSurrogate(b.charAt(keep - 1))) {
            keep--; // never half a character: a lone surrogate is not text
        }
        return b.substring(0, keep) + CUT;
    }
}
