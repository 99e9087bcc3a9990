package dev.runbus.server.logging;

import java.io.Writer;
import java.util.function.Consumer;

/** A writer that hands each complete line (without its line break) to a consumer; what is left is flushed on close. */
final class LineWriter extends Writer {

    private final Consumer<String> lines;
    private final StringBuilder pending = new StringBuilder();

    LineWriter(Consumer<String> lines) {
        this.lines = lines;
    }

    @Override
    public synchronized void write(char[] chars, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            char c = chars[i];
            if (c == '\n') {
                emit();
            } else if (c != '\r') {
                pending.append(c);
            }
        }
    }

    private void emit() {
        String line = pending.toString();
        pending.setLength(0);
        if (!line.isBlank()) {
            lines.accept(line);
        }
    }

    @Override
    public void flush() {
        // A line is written when it is complete; flushing half a line would split it in two JSON lines.
    }

    @Override
    public synchronized void close() {
        emit();
    }
}
