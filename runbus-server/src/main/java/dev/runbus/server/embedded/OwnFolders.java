package dev.runbus.server.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The folders the embedded servers take what they run and read from: they must be this user's own, and no other
 * account may change them, or that account could swap what runbus runs as this user (PostgreSQL's binaries, the
 * embedded Redis's config file with a {@code loadmodule} line) or the secrets it trusts (PostgreSQL's password
 * file). What runbus makes there it makes {@code 0700}, its missing parents included.
 */
public final class OwnFolders {

    /** The mode of what runbus makes: {@code 0700}. */
    static final Set<PosixFilePermission> PRIVATE = Set.copyOf(PosixFilePermissions.fromString("rwx------"));

    /** What a folder's mode must not give the group and others; the words and the fix of a refusal. */
    enum Closed {
        /** A folder runbus keeps to itself: no access at all. */
        TO_ALL(Set.copyOf(PosixFilePermissions.fromString("---rwxrwx")), "open to other accounts", "chmod 700"),
        /** A folder the user names: the group and others may read it, not change it. */
        TO_WRITES(Set.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE),
                "writable by other accounts", "chmod go-w");

        final Set<PosixFilePermission> refused;
        final String problem;
        final String fix;

        Closed(Set<PosixFilePermission> refused, String problem, String fix) {
            this.refused = refused;
            this.problem = problem;
            this.fix = fix;
        }
    }

    private OwnFolders() {
    }

    /**
     * The embedded servers' data folder ({@code --data-dir}, or a temporary one) or a folder in it: made {@code 0700}
     * with its missing parents when it is not there, and refused when it belongs to another user or others may
     * write to it.
     *
     * @throws IllegalStateException naming the folder, what is wrong with it and how to mend it
     */
    public static Path dataFolder(Path dir) throws IOException {
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PRIVATE));
        check(dir, Closed.TO_WRITES, "another account could swap the embedded servers' files there (the Redis config,"
                + " whose loadmodule line would run its code as this user, or PostgreSQL's password file)",
                "give a --data-dir of this user's own");
        return dir;
    }

    /**
     * @param risk      what another account could do there, for the message
     * @param otherwise what to do instead of changing the folder's mode, for the message
     * @throws IllegalStateException naming the folder, what is wrong with it and how to mend it
     */
    static void check(Path dir, Closed closed, String risk, String otherwise) throws IOException {
        Path shown = dir.toAbsolutePath();
        String owner = Files.getOwner(dir).getName();
        String me = System.getProperty("user.name");
        if (!owner.equals(me)) {
            throw new IllegalStateException(shown + " belongs to " + owner + ", not to " + me + ": " + risk + ". "
                    + Character.toUpperCase(otherwise.charAt(0)) + otherwise.substring(1));
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir);
        if (perms.stream().anyMatch(closed.refused::contains)) {
            throw new IllegalStateException(shown + " is " + closed.problem + " (" + PosixFilePermissions.toString(perms)
                    + "): " + risk + ". " + closed.fix + " " + shown + " if nothing there was changed by another"
                    + " account, or " + otherwise);
        }
    }
}
