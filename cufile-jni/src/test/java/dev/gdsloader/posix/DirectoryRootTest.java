package dev.gdsloader.posix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link DirectoryRoot} and {@link CheckedFiles} against real files, real links and a real FIFO, once through
 * {@code openat2} and once through the per-component {@code openat} walk the kernel's {@code ENOSYS} falls back to:
 * nothing outside the root is opened, no link is followed, hard links are refused unless allowed, and a file replaced
 * after its check is refused naming it. The files outside hold known bytes that no open may return.
 */
@Timeout(60)
class DirectoryRootTest {
    private static final String OUTSIDE_BYTES = "OUTSIDE-THE-ROOT:secret";

    @TempDir
    Path root;
    @TempDir
    Path outside;

    private Path secret() throws IOException {
        return Files.writeString(outside.resolve("secret"), OUTSIDE_BYTES, StandardCharsets.UTF_8);
    }

    private static String read(PosixFile f) throws IOException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(4096);
            long n = f.read(m, 0);
            return new String(m.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
        }
    }

    private static RefusedFileException refused(RefusedFileException.Reason reason, Path file, IoCall call) {
        RefusedFileException e = assertThrows(RefusedFileException.class, call::run, file + " was opened");
        assertEquals(reason, e.reason(), e.getMessage());
        assertTrue(e.getMessage().startsWith(file + ": refused: "), e.getMessage());
        assertFalse(e.getMessage().contains(OUTSIDE_BYTES), e.getMessage());
        return e;
    }

    @FunctionalInterface
    private interface IoCall {
        void run() throws IOException;
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void aRegularFileOpensBeneathWithTheIdentityJavaSees(boolean openat2) throws IOException {
        Files.createDirectories(root.resolve("a/b"));
        Path f = Files.writeString(root.resolve("a/b/x.bin"), "inside bytes");
        try (DirectoryRoot r = DirectoryRoot.open(root, false, openat2);
             PosixFile pf = r.openBeneath(Path.of("a/b/x.bin"), false, null)) {
            assertEquals("inside bytes", read(pf));
            assertEquals(root.toRealPath().resolve("a/b/x.bin"), pf.path());
            FileIdentity id = pf.identity();
            assertEquals(((Number) Files.getAttribute(f, "unix:dev")).longValue(), id.device(), id.toString());
            assertEquals(((Number) Files.getAttribute(f, "unix:ino")).longValue(), id.inode(), id.toString());
            assertEquals(1, id.links());
            assertTrue(id.regular());
            assertEquals(12, id.size());
            assertTrue(id.sameFile(r.identify(Path.of("a/b/x.bin"))));
        }
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void noLinkIsFollowedAnywhereInThePath(boolean openat2) throws IOException {
        Path secret = secret();
        Files.createDirectories(root.resolve("d"));
        Files.writeString(root.resolve("d/inside.bin"), "inside");
        Files.createSymbolicLink(root.resolve("d/last.bin"), secret);
        Files.createSymbolicLink(root.resolve("middle"), outside);
        Files.createSymbolicLink(root.resolve("alias"), root.resolve("d"));
        Files.createSymbolicLink(root.resolve("d/relative.bin"), Path.of("inside.bin"));
        try (DirectoryRoot r = DirectoryRoot.open(root, false, openat2)) {
            Path real = root.toRealPath();
            refused(RefusedFileException.Reason.LINK, real.resolve("d/last.bin"),
                    () -> r.openBeneath(Path.of("d/last.bin"), false, null).close());
            refused(RefusedFileException.Reason.LINK, real.resolve("middle/secret"),
                    () -> r.openBeneath(Path.of("middle/secret"), false, null).close());
            refused(RefusedFileException.Reason.LINK, real.resolve("alias/inside.bin"),
                    () -> r.openBeneath(Path.of("alias/inside.bin"), false, null).close());
            refused(RefusedFileException.Reason.LINK, real.resolve("d/relative.bin"),
                    () -> r.identify(Path.of("d/relative.bin")));
            refused(RefusedFileException.Reason.OUTSIDE, real.resolve("../" + outside.getFileName() + "/secret"),
                    () -> r.openBeneath(Path.of("../" + outside.getFileName() + "/secret"), false, null).close());
            refused(RefusedFileException.Reason.OUTSIDE, secret, () -> r.openBeneath(secret, false, null).close());
            refused(RefusedFileException.Reason.NOT_REGULAR, real.resolve("d"), () -> r.identify(Path.of("d")));
            var missing = assertThrows(PosixFile.ErrnoException.class, () -> r.identify(Path.of("d/none.bin")));
            assertTrue(missing.getMessage().startsWith(real.resolve("d/none.bin") + ": ") && missing.getMessage().contains("ENOENT"),
                    missing.getMessage());
        }
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void aHardLinkIsRefusedUnlessAllowed(boolean openat2) throws IOException {
        Path secret = secret();
        Path link = root.resolve("link.bin");
        try {
            Files.createLink(link, secret);
        } catch (IOException e) { // two temporary directories on different filesystems: link within the root
            Files.writeString(root.resolve("other.bin"), OUTSIDE_BYTES);
            Files.createLink(link, root.resolve("other.bin"));
        }
        try (DirectoryRoot r = DirectoryRoot.open(root, false, openat2)) {
            RefusedFileException e = refused(RefusedFileException.Reason.HARD_LINK, root.toRealPath().resolve("link.bin"),
                    () -> r.openBeneath(Path.of("link.bin"), false, null).close());
            assertTrue(e.getMessage().contains("2 hard links") && e.getMessage().contains("--allow-hard-links"), e.getMessage());
            refused(RefusedFileException.Reason.HARD_LINK, root.toRealPath().resolve("link.bin"), () -> r.identify(Path.of("link.bin")));
        }
        try (DirectoryRoot r = DirectoryRoot.open(root, true, openat2); PosixFile f = r.openBeneath(Path.of("link.bin"), false, null)) {
            assertTrue(r.allowsHardLinks());
            assertEquals(OUTSIDE_BYTES, read(f));
            assertEquals(2, f.identity().links());
        }
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void aFifoIsRefusedWithoutWaitingForAWriter(boolean openat2) throws Exception {
        Process p = new ProcessBuilder("mkfifo", root.resolve("pipe.bin").toString()).inheritIO().start();
        assertTrue(p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0, "mkfifo failed");
        try (DirectoryRoot r = DirectoryRoot.open(root, false, openat2)) {
            refused(RefusedFileException.Reason.NOT_REGULAR, root.toRealPath().resolve("pipe.bin"),
                    () -> r.openBeneath(Path.of("pipe.bin"), false, null).close());
        }
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void checkedFilesOpenTheFileCheckedAndNothingSwappedInAfter(boolean openat2) throws IOException {
        Path secret = secret();
        Files.createDirectories(root.resolve("train"));
        Path shard = Files.writeString(root.resolve("train/x.bin"), "checked bytes");
        Path other = Files.writeString(root.resolve("train/y.bin"), "other bytes");
        Files.createSymbolicLink(root.resolve("alias"), root.resolve("train"));
        Path viaAlias = root.resolve("alias/y.bin");
        try (DirectoryRoot r = DirectoryRoot.open(root, false, openat2)) {
            CheckedFiles files = new CheckedFiles(r);
            files.check(shard);
            files.check(viaAlias); // a link inside the root, resolved once at the check
            assertEquals(2, files.size());
            try (PosixFile f = files.open(viaAlias, false)) {
                assertEquals("other bytes", read(f));
                assertEquals(root.toRealPath().resolve("train/y.bin"), f.path());
            }
            // the link swapped in after the check: refused, never the outside bytes
            Files.delete(other);
            Files.createSymbolicLink(other, secret);
            refused(RefusedFileException.Reason.LINK, root.toRealPath().resolve("train/y.bin"),
                    () -> files.open(viaAlias, false).close());
            // another regular file put in its place
            Path tmp = Files.writeString(root.resolve("train/x.bin.new"), "replacement");
            Files.move(tmp, shard, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            RefusedFileException e = refused(RefusedFileException.Reason.REPLACED, root.toRealPath().resolve("train/x.bin"),
                    () -> files.open(shard, false).close());
            assertTrue(e.getMessage().contains("checked when the dataset was planned"), e.getMessage());
            refused(RefusedFileException.Reason.NOT_CHECKED, root.resolve("train/x.bin.new").toAbsolutePath(),
                    () -> files.open(root.resolve("train/x.bin.new"), false).close());
            refused(RefusedFileException.Reason.OUTSIDE, secret, () -> files.check(secret));
            Files.createSymbolicLink(root.resolve("out"), secret);
            refused(RefusedFileException.Reason.OUTSIDE, root.resolve("out"), () -> files.check(root.resolve("out")));
            assertFalse(files.root().path().toString().isEmpty());
        }
    }

    @ParameterizedTest(name = "openat2 {0}")
    @ValueSource(booleans = {true, false})
    void aClosedRootRefusesUse(boolean openat2) throws IOException {
        Files.writeString(root.resolve("x.bin"), "x");
        DirectoryRoot r = DirectoryRoot.open(root, false, openat2);
        r.close();
        r.close(); // once; the second does nothing
        var e = assertThrows(IllegalStateException.class, () -> r.openBeneath(Path.of("x.bin"), false, null));
        assertTrue(e.getMessage().contains("already closed"), e.getMessage());
        assertThrows(IOException.class, () -> DirectoryRoot.open(root.resolve("x.bin"), false));
    }
}
