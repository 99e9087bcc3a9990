package dev.runbus.server.embedded;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The embedded PostgreSQL of demo and serve, started so that another account on this host gets nothing from it:
 *
 * <ul>
 *   <li>the superuser {@code postgres} has a random password, checked with SCRAM ({@code initdb --auth=scram-sha-256
 *   --pwfile}) on every connection, local socket included. zonky's own initdb says {@code trust}, which let any
 *   local account in as superuser, and a superuser runs programs as this user ({@code COPY ... TO PROGRAM});</li>
 *   <li>the password lives in {@value #PASSWORD_FILE} (0600) beside the data, so that a {@code --data-dir} can be
 *   started again, and goes to the pool in-process, never in a URL or on a command line;</li>
 *   <li>the binaries are unpacked into a folder only this user may enter ({@link #workingDirectory()}). zonky's
 *   default is {@code embedded-pg} under the system temp folder, which it makes world-writable and trusts by a
 *   marker file, so another account could plant the binaries that the next start runs.</li>
 * </ul>
 *
 * <p>PostgreSQL's programs refuse to run as root. As root, zonky runs them in a user namespace of their own
 * ({@code unshare -U}), where they are nobody; where the system allows no user namespace (a container's default
 * seccomp profile, {@code user.max_user_namespaces=0}), {@link #checkCanRunHere()} says so before anything starts.
 */
public final class EmbeddedPostgresServer {

    /** Beside the data folder: the superuser's password, first line. */
    public static final String PASSWORD_FILE = "postgres.password";

    /**
     * zonky remembers, per resolver, where it unpacked the binaries in this JVM, whatever working directory a later
     * start names: a resolver of runbus's own means the binaries runbus runs are the ones in its private folder, even
     * where other code in the JVM started zonky with its defaults first.
     */
    private static final PgBinaryResolver BINARIES = (system, architecture) -> {
        try {
            return DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(system, architecture);
        } catch (RuntimeException | IOException e) {
            throw new IllegalStateException(EmbeddedBinaries.missing("PostgreSQL", system + " " + architecture), e);
        }
    };

    private static Path workingDirectory;

    private EmbeddedPostgresServer() {
    }

    /** A started server and its superuser's password. */
    public record Started(EmbeddedPostgres postgres, String password) {
    }

    /**
     * Refuses, naming the ways out, to start PostgreSQL as root where zonky cannot run it in a user namespace: initdb
     * would fail with only "Process [initdb ...] failed", its own reason in a log line nobody sees.
     *
     * @throws IllegalStateException as root without a user namespace to run PostgreSQL in
     */
    public static void checkCanRunHere() {
        if (isRoot() && !LinuxUtils.isUnshareAvailable()) {
            throw new IllegalStateException("the embedded PostgreSQL cannot start as root here: PostgreSQL refuses to"
                    + " run as root, and runbus runs it as root only in a user namespace of its own ('unshare -U'),"
                    + " which this system does not allow. Run runbus as a user other than root (in a container:"
                    + " docker run --user 1000), or allow user namespaces (util-linux's unshare installed, sysctl"
                    + " user.max_user_namespaces above 0, a container seccomp profile that permits unshare), or, for"
                    + " demo and serve, give --database-url of a PostgreSQL of your own");
        }
    }

    private static boolean isRoot() {
        try {
            return new com.sun.security.auth.module.UnixSystem().getUid() == 0;
        } catch (LinkageError | RuntimeException notUnix) {
            return false;
        }
    }

    /**
     * Starts PostgreSQL on the data in {@code dataDir}, initialising it first when it holds none.
     *
     * @throws IllegalStateException when the data was made without a password (by an earlier runbus), or the
     *                               working folder is open to other accounts
     */
    public static Started start(Path dataDir) throws IOException {
        Path passwordFile = dataDir.resolveSibling(PASSWORD_FILE);
        boolean initialised = Files.exists(dataDir.resolve("postgresql.conf"));
        if (initialised && !Files.exists(passwordFile)) {
            throw new IllegalStateException("the embedded PostgreSQL in " + dataDir + " was made by an earlier runbus,"
                    + " whose superuser needs no password; runbus starts it only with one. Move " + dataDir
                    + " away (or remove it) to start afresh, or give its servers by --redis-url and --database-url");
        }
        String password = initialised ? readPassword(passwordFile) : writePassword(passwordFile);
        Path binaries = workingDirectory().resolve("binaries");
        Files.createDirectories(binaries);
        EmbeddedPostgres pg = EmbeddedPostgres.builder()
                .setOverrideWorkingDirectory(binaries.toFile())
                .setPgBinaryResolver(BINARIES)
                .setDataDirectory(dataDir.toFile())
                // The data stays where --data-dir puts it; a temporary folder is deleted by Infrastructure.close().
                // No shutdown hook: Infrastructure.close() stops it after the runs layer drained.
                .setCleanDataDirectory(false)
                .setRegisterShutdownHook(false)
                // zonky passes these to initdb after its own "-A trust", and initdb takes the last one given.
                .setLocaleConfig("auth", "scram-sha-256")
                .setLocaleConfig("pwfile", passwordFile.toAbsolutePath().toString())
                // zonky's own start-up check connects as the superuser too.
                .setConnectConfig("password", password)
                .start();
        // zonky makes the folder it unpacks into writable by everyone; the private folder around it is what keeps
        // others out, and this keeps the folder itself as private as it was made.
        Files.setPosixFilePermissions(binaries, OwnFolders.PRIVATE);
        return new Started(pg, password);
    }

    /**
     * The folder zonky unpacks PostgreSQL into and scans for stale data folders: {@code ~/.cache/runbus}, made 0700,
     * or, where the home folder cannot hold it, a 0700 folder made under the system temp folder for this JVM.
     */
    public static synchronized Path workingDirectory() throws IOException {
        if (workingDirectory != null) {
            return workingDirectory;
        }
        Path dir;
        try {
            dir = Path.of(System.getProperty("user.home"), ".cache", "runbus");
            Files.createDirectories(dir.getParent());
            if (!Files.isDirectory(dir)) {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OwnFolders.PRIVATE));
            }
        } catch (IOException | RuntimeException noHome) {
            dir = Files.createTempDirectory("runbus-postgres-"); // 0700, as Java makes temporary folders
        }
        checkPrivate(dir);
        // zonky also creates and scans a folder for stale data folders of its own, stopping the servers their
        // pid files name and deleting them: under the system temp folder by default, where others could plant them.
        Path scratch = dir.resolve("scratch");
        Files.createDirectories(scratch);
        if (System.getProperty("ot.epg.working-dir") == null) {
            System.setProperty("ot.epg.working-dir", scratch.toString());
        }
        workingDirectory = dir;
        return dir;
    }

    /** @throws IllegalStateException when {@code dir} belongs to another user or others may enter or change it */
    public static void checkPrivate(Path dir) throws IOException {
        OwnFolders.check(dir, OwnFolders.Closed.TO_ALL, "another account could plant the PostgreSQL binaries the"
                + " embedded server runs", "remove it");
    }

    private static String writePassword(Path file) throws IOException {
        String password = EmbeddedPasswords.random();
        // Made private before the password is in it, then put in place whole.
        Path tmp = Files.createTempFile(file.getParent(), ".postgres", ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(tmp, password + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return password;
    }

    private static String readPassword(Path file) throws IOException {
        String password = Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst().orElse("").trim();
        if (password.isEmpty()) {
            throw new IllegalStateException(file + " is empty: its first line must be the embedded PostgreSQL's"
                    + " superuser password");
        }
        return password;
    }
}
