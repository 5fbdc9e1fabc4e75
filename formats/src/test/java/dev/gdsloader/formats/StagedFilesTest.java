package dev.gdsloader.formats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.npy.NpyWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Staged dataset files: the old files stay until the commit, the manifest comes last, an abort leaves the old ones. */
class StagedFilesTest {
    @TempDir
    Path dir;

    private static List<String> names(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private List<String> names() throws IOException {
        return names(dir);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void aDirectoryOfFilesIsSwappedWholeAtTheCommitKeepingItsOtherFiles() throws IOException {
        Path ds = Files.createDirectories(dir.resolve("ds"));
        Files.writeString(ds.resolve("data-00000.npy"), "old 0");
        Files.writeString(ds.resolve("data-00001.npy"), "old 1");
        Files.writeString(ds.resolve("dataset.json"), "old manifest");
        Files.writeString(ds.resolve("notes.txt"), "the user's");
        try (StagedFiles s = StagedFiles.in(ds)) {
            Path staged = s.stage("data-00000.npy");
            assertTrue(staged.getParent().getFileName().toString().startsWith(StagedFiles.MARK), staged.toString());
            assertEquals(dir, staged.getParent().getParent(), "a hidden sibling of the dataset directory");
            Files.writeString(staged, "new 0");
            assertEquals(staged, s.locate("data-00000.npy"));
            assertEquals(ds.toAbsolutePath().resolve("other"), s.locate("other"), "a name not staged is where it is");
            assertEquals("old 0", Files.readString(ds.resolve("data-00000.npy")), "nothing replaced before the commit");
            s.commit(List.of(ds.resolve("data-00000.npy"), ds.resolve("data-00001.npy")), "dataset.json", utf8("new manifest"));
            assertTrue(s.committed());
            assertEquals(0, s.abort(), "an abort after the commit removes nothing");
        }
        assertEquals(List.of("data-00000.npy", "dataset.json", "notes.txt"), names(ds));
        assertEquals("new 0", Files.readString(ds.resolve("data-00000.npy")));
        assertEquals("new manifest", Files.readString(ds.resolve("dataset.json")));
        assertEquals("the user's", Files.readString(ds.resolve("notes.txt")));
        assertEquals(1, Files.getAttribute(ds.resolve("notes.txt"), "unix:nlink"), "the old directory's link is gone");
        assertEquals(List.of("ds"), names(), "no staging or old directory is left");
    }

    @Test
    void aDirectoryWithASubdirectoryIsCommittedInPlaceManifestLast() throws IOException {
        Files.createDirectories(dir.resolve("sub"));
        Files.writeString(dir.resolve("data-00000.npy"), "old 0");
        Files.writeString(dir.resolve("data-00001.npy"), "old 1");
        Files.writeString(dir.resolve("dataset.json"), "old manifest");
        try (StagedFiles s = StagedFiles.in(dir)) {
            Path staged = s.stage("data-00000.npy");
            assertTrue(staged.getFileName().toString().startsWith(StagedFiles.MARK), staged.toString());
            Files.writeString(staged, "new 0");
            assertEquals("old 0", Files.readString(dir.resolve("data-00000.npy")));
            s.commit(List.of(dir.resolve("data-00000.npy"), dir.resolve("data-00001.npy")), "dataset.json", utf8("new manifest"));
        }
        assertEquals(List.of("data-00000.npy", "dataset.json", "sub"), names());
        assertEquals("new 0", Files.readString(dir.resolve("data-00000.npy")));
        assertEquals("new manifest", Files.readString(dir.resolve("dataset.json")));
    }

    @Test
    void anAbortOrACloseWithoutCommitLeavesTheOldFilesAndNoStagedOnes() throws IOException {
        Files.createDirectories(dir.resolve("sub")); // in place: the writer's temporary file is beside the staged one
        Files.writeString(dir.resolve("data-00000.npy"), "old");
        StagedFiles s = StagedFiles.in(dir);
        Files.writeString(s.stage("data-00000.npy"), "new");
        try (NpyWriter w = NpyWriter.create(s.stage("data-00001.npy"), DType.UINT8, new long[] {4})) {
            w.write(ByteBuffer.allocate(2)); // a writer under way: its own temporary file of the staged name
            assertEquals(2, s.abort(), "the staged file and the writer's temporary one");
            assertThrows(IllegalStateException.class, () -> s.stage("data-00002.npy"));
        } catch (IOException incomplete) {
            assertTrue(incomplete.getMessage().contains("wrote 2 data bytes but the array needs 4"), incomplete.getMessage());
        }
        assertEquals(List.of("data-00000.npy", "sub"), names());
        assertEquals("old", Files.readString(dir.resolve("data-00000.npy")));
        assertThrows(IllegalStateException.class, () -> s.commit(List.of(), null, null));
        Path ds = dir.resolve("ds");
        StagedFiles swap = StagedFiles.in(ds);
        Files.writeString(swap.stage("data-00000.npy"), "new");
        swap.close();
        assertEquals(List.of("data-00000.npy", "sub"), names(), "the staging directory went with the abort");
    }

    @Test
    void whatADeadProcessLeftIsRemovedOrPutBackByTheNextStagingAndALiveOnesIsKept() throws Exception {
        Process done = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-version")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertEquals(0, done.waitFor());
        Files.createDirectories(dir.resolve("sub"));
        Path orphan = Files.writeString(dir.resolve(StagedFiles.MARK + done.pid() + "-ab12-data-00000.npy"), "killed run");
        Path live = Files.writeString(dir.resolve(StagedFiles.MARK + ProcessHandle.current().pid() + "-cd34-data-00000.npy"), "x");
        Path foreign = Files.writeString(dir.resolve(StagedFiles.MARK + "notapid"), "not ours");
        // a swap killed between its renames: the dataset directory is missing, the old one is aside
        Path aside = Files.createDirectories(dir.resolve(StagedFiles.OLD_MARK + done.pid() + "-ef56-ds"));
        Files.writeString(aside.resolve("dataset.json"), "previous");
        Path stagedDir = Files.createDirectories(dir.resolve(StagedFiles.MARK + done.pid() + "-ef56-ds"));
        Files.writeString(stagedDir.resolve("data-00000.npy"), "new, never committed");
        try (StagedFiles s = StagedFiles.in(dir)) {
            assertFalse(Files.exists(orphan));
            assertTrue(Files.exists(live), "a live process's staging is left alone");
            assertTrue(Files.exists(foreign));
            assertThrows(IllegalArgumentException.class, () -> s.stage("../x"));
            s.stage("a.npy");
            assertThrows(IllegalArgumentException.class, () -> s.stage("a.npy"));
        }
        try (StagedFiles s = StagedFiles.in(dir.resolve("ds"))) {
            assertFalse(s.committed());
            assertEquals("previous", Files.readString(dir.resolve("ds").resolve("dataset.json")), "the previous dataset is back");
            assertFalse(Files.exists(stagedDir));
            assertFalse(Files.exists(aside));
        }
    }

    @Test
    void anIncompleteNpyWriterLeavesTheFileItWouldReplaceAsItWas() throws IOException {
        Path f = dir.resolve("a.npy");
        NpyWriter.write(f, DType.UINT8, new long[] {3}, new byte[] {1, 2, 3});
        byte[] before = Files.readAllBytes(f);
        NpyWriter w = NpyWriter.create(f, DType.UINT8, new long[] {3});
        w.write(ByteBuffer.wrap(new byte[] {9}));
        assertArrayEquals(before, Files.readAllBytes(f), "the target is untouched while the writer writes");
        assertThrows(IOException.class, w::close);
        assertArrayEquals(before, Files.readAllBytes(f), "and after an incomplete close");
        assertEquals(List.of("a.npy"), names(), "no temporary file is left");
    }
}
