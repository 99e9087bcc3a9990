package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.runbus.server.embedded.OwnFolders;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code --data-dir} holds what the embedded servers run on (the Redis config file, PostgreSQL's data and its
 * password file), so it is trusted only as the PostgreSQL binaries' folder is: this user's own, and writable by no
 * other account, or another account could swap the Redis config for one that loads its module. Refused with a
 * message naming the folder, what is wrong and the fix, before any server starts; what runbus makes is 0700.
 */
class EmbeddedDataDirTest {

    private Path root;

    @BeforeEach
    void folder() throws IOException {
        root = Files.createTempDirectory("runbus-datadir-test");
    }

    @AfterEach
    void remove() throws IOException {
        try (Stream<Path> all = Files.walk(root)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Test
    void aDataDirOthersMayWriteIsRefused() throws Exception {
        Path data = Files.createDirectory(root.resolve("data"));
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxrwxr-x"));
        String error = refused(data);
        assertThat(error).contains(data.toString()).contains("writable by other accounts").contains("rwxrwxr-x")
                .contains("loadmodule").contains("chmod go-w " + data);
        try (Stream<Path> made = Files.list(data)) {
            assertThat(made).as("nothing written in the refused folder").isEmpty();
        }
    }

    @Test
    void aRedisFolderOthersMayWriteInAPrivateDataDirIsRefused() throws Exception {
        Path data = Files.createDirectory(root.resolve("data"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        Path redis = Files.createDirectory(data.resolve("redis"));
        Files.setPosixFilePermissions(redis, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(refused(data)).contains(redis.toString()).contains("writable by other accounts")
                .contains("chmod go-w " + redis);
        assertThat(redis.resolve("redis.conf")).doesNotExist();
    }

    @Test
    void aDataDirOfAnotherUserIsRefused() throws Exception {
        Path data = Files.createDirectory(root.resolve("data"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        UserPrincipal nobody = data.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        try {
            Files.setOwner(data, nobody);
        } catch (FileSystemException notRoot) {
            Assumptions.abort("only root can give a folder to another user: " + notRoot.getMessage());
        }
        assertThat(refused(data)).contains(data.toString()).contains("belongs to nobody, not to "
                + System.getProperty("user.name")).contains("Give a --data-dir of this user's own");
    }

    @Test
    void aNewDataDirAndTheParentsRunbusMakesAreThisUsersAlone() throws Exception {
        Path data = root.resolve("a").resolve("b").resolve("data");
        OwnFolders.dataFolder(data);
        for (Path p : new Path[] {root.resolve("a"), root.resolve("a").resolve("b"), data}) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(p))).as(p.toString())
                    .isEqualTo("rwx------");
        }
    }

    /** Starts the embedded Redis on {@code data}, which must be refused; returns the error's message. */
    private static String refused(Path data) {
        Settings s = Settings.resolve(Map.of(Setting.DATA_DIR, data.toString()), Map.of(), null);
        try {
            Infrastructure infra = Infrastructure.start(s, false, true, null, 2, new PrintWriter(Writer.nullWriter()));
            infra.close();
            return fail("the embedded servers started on " + data);
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
    }
}
