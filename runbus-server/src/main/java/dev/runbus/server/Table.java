package dev.runbus.server;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** A plain text table for people: columns padded to their widest cell. */
public final class Table {

    private final List<String> headers;
    private final List<List<String>> rows = new ArrayList<>();

    public Table(String... headers) {
        this.headers = List.of(headers);
    }

    public Table row(Object... cells) {
        List<String> r = new ArrayList<>();
        for (Object c : cells) {
            r.add(c == null ? "-" : String.valueOf(c));
        }
        rows.add(r);
        return this;
    }

    public boolean isEmpty() {
        return rows.isEmpty();
    }

    public void print(PrintWriter out) {
        int[] width = new int[headers.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = headers.get(i).length();
            for (List<String> r : rows) {
                width[i] = Math.max(width[i], r.get(i).length());
            }
        }
        out.println(line(headers, width));
        StringBuilder rule = new StringBuilder();
        for (int w : width) {
            rule.append("-".repeat(w)).append("  ");
        }
        out.println(rule.toString().stripTrailing());
        for (List<String> r : rows) {
            out.println(line(r, width));
        }
    }

    private static String line(List<String> cells, int[] width) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            b.append(String.format("%-" + width[i] + "s", cells.get(i))).append("  ");
        }
        return b.toString().stripTrailing();
    }
}
