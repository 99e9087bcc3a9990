package dev.runbus.bench;

/** The report's text as it is written, line by line, and the few marks its tables share. */
final class Markdown {

    private final StringBuilder text = new StringBuilder();

    void line(String s) {
        text.append(s).append('\n');
    }

    void line() {
        text.append('\n');
    }

    /** A block of markdown written elsewhere (the hand-written analysis), as it is. */
    void block(String markdown) {
        text.append(markdown.strip()).append('\n');
    }

    /** An image, when there is a file for it. */
    void image(String file, String alt) {
        if (file != null) {
            line("![" + alt + "](" + file + ")");
            line();
        }
    }

    /** runbus's row label in bold, so that it stands out among the contenders. */
    static String bold(String name) {
        return name.equals(RunbusContender.NAME) ? "**" + name + "**" : name;
    }

    /** A value of runbus's row in bold; a missing value stays plain. */
    static String bold(String name, String value) {
        return name.equals(RunbusContender.NAME) && !value.equals("—") ? "**" + value + "**" : value;
    }

    @Override
    public String toString() {
        return text.toString();
    }
}
