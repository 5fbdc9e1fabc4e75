package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardFormat;
import dev.gdsloader.formats.raw.RawWriter;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dataset names resolve under the server's root by real paths: a real server on loopback, real files and real
 * symbolic links leading out of the root (to a second temporary directory holding valid shards, which a lexical check
 * would serve). Each escape is refused naming the dataset, the error names neither the link's target nor the root's
 * absolute path nor a byte of the outside file, and the server goes on serving.
 */
@Timeout(120)
class SafeRootTest extends ServiceTestBase {
    /** Bytes of the files outside the root: no error may quote them. */
    private static final String SECRET = "root:x:0:0:SECRET-OUTSIDE-BYTES";

    @TempDir
    Path outside;

    private PrefetchClient.Builder client(String dataset) {
        return PrefetchClient.builder("127.0.0.1", server.port()).dataset(dataset).batchSize(4).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30));
    }

    /** Opens {@code dataset}, expecting a refusal; checks it leaks nothing and the server still serves; @return it. */
    private String refused(String dataset) throws Exception {
        var e = assertThrows(PrefetchServiceException.class, () -> client(dataset).open().close(), dataset + " was served");
        String m = e.getMessage();
        if (m.contains("' refused: ")) {
            assertEquals(org.apache.arrow.flight.FlightStatusCode.UNAUTHORIZED, e.code(), "gRPC PERMISSION_DENIED: " + m);
        } else if (m.contains("unknown dataset")) {
            assertEquals(org.apache.arrow.flight.FlightStatusCode.NOT_FOUND, e.code(), m);
        } else {
            assertEquals(org.apache.arrow.flight.FlightStatusCode.INVALID_ARGUMENT, e.code(), m);
        }
        assertEquals(1, m.lines().count(), "one line: " + m);
        assertFalse(m.contains(outside.toString()) || m.contains(outside.toRealPath().toString()), "names the target: " + m);
        assertFalse(m.contains(root.toString()) || m.contains(root.toRealPath().toString()), "names the root's path: " + m);
        assertFalse(m.contains("SECRET") || m.contains("root:x"), "quotes the outside file: " + m);
        awaitSessions(0);
        try (PrefetchClient c = client("train").open()) {
            long n = 0;
            for (RemoteBatch b : c) {
                try (b) {
                    n += b.records();
                }
            }
            assertEquals(RECORDS, n, "the server goes on serving");
        }
        awaitSessions(0);
        return m;
    }

    private Path outsideFile(String name) throws IOException {
        return Files.writeString(outside.resolve(name), SECRET + "\n", StandardCharsets.UTF_8);
    }

    @Test
    void aSymlinkedDatasetDirectoryLeadingOutsideIsRefused() throws Exception {
        ServiceShards.write(outside.resolve("data"), 5, 5); // a valid dataset: a lexical check serves it
        Files.createSymbolicLink(root.resolve("escape"), outside.resolve("data"));
        Files.createDirectories(root.resolve("nested"));
        Files.createSymbolicLink(root.resolve("nested").resolve("deeper"), outside);
        assertTrue(refused("escape").contains("dataset 'escape' refused: it leads outside the server's root"));
        assertTrue(refused("nested/deeper/data").contains("dataset 'nested/deeper/data' refused: it leads outside"));
    }

    @Test
    void aSymlinkedNpyShardLeadingOutsideIsRefused() throws Exception {
        ServiceShards.write(root.resolve("mixed"), 10);
        ServiceShards.write(outside.resolve("data"), 10); // the same shapes: a lexical check delivers its bytes
        Files.delete(root.resolve("mixed").resolve("x-00000.npy"));
        Files.createSymbolicLink(root.resolve("mixed").resolve("x-00000.npy"), outside.resolve("data").resolve("x-00000.npy"));
        assertTrue(refused("mixed").contains("dataset 'mixed' refused: its entry 'mixed/x-00000.npy' leads outside the server's root"));

        ServiceShards.write(root.resolve("text"), 10);
        Files.delete(root.resolve("text").resolve("y-00000.npy"));
        Files.createSymbolicLink(root.resolve("text").resolve("y-00000.npy"), outsideFile("passwd"));
        assertTrue(refused("text").contains("its entry 'text/y-00000.npy' leads outside"));
        // the shard itself as the dataset name
        Files.createSymbolicLink(root.resolve("single.npy"), outside.resolve("data").resolve("y-00000.npy"));
        assertTrue(refused("single.npy").contains("dataset 'single.npy' refused: it leads outside"));
    }

    @Test
    void aSymlinkedRawShardOrSidecarLeadingOutsideIsRefused() throws Exception {
        byte[] data = new byte[40];
        Files.createDirectories(root.resolve("raw"));
        RawWriter.write(root.resolve("raw").resolve("x-00000.bin"), DType.UINT8, new long[] {4}, data);
        Path secret = Files.write(outside.resolve("secret.bin"), (SECRET + "0123456789").getBytes(StandardCharsets.UTF_8));
        Files.delete(root.resolve("raw").resolve("x-00000.bin"));
        Files.createSymbolicLink(root.resolve("raw").resolve("x-00000.bin"), secret);
        assertTrue(refused("raw").contains("its entry 'raw/x-00000.bin' leads outside"));

        Files.createDirectories(root.resolve("side"));
        RawWriter.write(root.resolve("side").resolve("x-00000.bin"), DType.UINT8, new long[] {4}, data);
        Files.move(root.resolve("side").resolve("x-00000.bin.json"), outside.resolve("x-00000.bin.json"));
        Files.createSymbolicLink(root.resolve("side").resolve("x-00000.bin.json"), outside.resolve("x-00000.bin.json"));
        assertTrue(refused("side").contains("its entry 'side/x-00000.bin.json' leads outside"));
        assertTrue(refused("side/x-00000.bin").contains("dataset 'side/x-00000.bin' refused: its entry 'side/x-00000.bin.json'"));
    }

    @Test
    void aManifestEntryOrManifestLeadingOutsideIsRefused() throws Exception {
        ServiceShards.write(outside.resolve("data"), 10);
        Path man = Files.createDirectories(root.resolve("man"));
        Files.createSymbolicLink(man.resolve("sub"), outside.resolve("data"));
        DatasetManifest.builder(ShardFormat.NPY).column("y", DType.INT32).shard("sub/y-00000.npy", "y", 10).build(man).write(man);
        assertTrue(refused("man").contains("its entry 'man/sub/y-00000.npy' leads outside"));

        Path man2 = Files.createDirectories(root.resolve("man2"));
        ServiceShards.write(man2, 10);
        DatasetManifest.builder(ShardFormat.NPY).column("y", DType.INT32).shard("y-00000.npy", "y", 10).build(man2)
                .write(outside);
        Files.createSymbolicLink(man2.resolve(DatasetManifest.FILE_NAME), outside.resolve(DatasetManifest.FILE_NAME));
        assertTrue(refused("man2").contains("its entry 'man2/dataset.json' leads outside"));
        assertTrue(refused("./man2/").contains("dataset './man2/' refused: its entry 'man2/dataset.json' leads outside"));
    }

    @Test
    void namesThatAreNotSafeRelativeNamesAreRefused() throws Exception {
        assertTrue(refused("../..").contains("dataset '../..' refused: '..' segments are not allowed"));
        assertTrue(refused("train/../../x").contains("'..' segments are not allowed"));
        assertTrue(refused("/etc").contains("dataset '/etc' refused: absolute names are not allowed"));
        assertTrue(refused("train\0x").contains("dataset 'train?x' refused: NUL and control characters"));
        assertTrue(refused("a\\b").contains("backslashes are not allowed"));
        assertTrue(refused("nope").contains("unknown dataset 'nope': no such directory or shard under the server's root"));
        assertTrue(refused(" ").contains("option 'dataset' is missing"));
    }

    @Test
    void aMalformedShardInsideTheRootIsNamedRelativeToItWithoutItsBytes() throws Exception {
        Path bad = Files.createDirectories(root.resolve("bad"));
        Files.writeString(bad.resolve("x-00000.npy"), SECRET + " padding to make it long enough for a header\n");
        String m = refused("bad");
        assertTrue(m.contains("dataset 'bad' is not a readable dataset: bad/x-00000.npy: at byte offset 0: expected"), m);
    }

    /** A truncated shard: the client is told the size expected and the size found, named relative to the root. */
    @Test
    void aTruncatedShardTellsTheClientTheSizeFound() throws Exception {
        Path cut = Files.createDirectories(root.resolve("cut"));
        Path x = cut.resolve("x-00000.npy");
        dev.gdsloader.formats.npy.NpyWriter.write(x, DType.UINT8, new long[] {10, 100}, new byte[1000]);
        long whole = Files.size(x);
        try (var ch = java.nio.channels.FileChannel.open(x, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(whole - 300);
        }
        String m = refused("cut");
        assertTrue(m.contains("cut/x-00000.npy: at byte offset " + (whole - 300) + ": expected " + whole + " bytes (header "
                + (whole - 1000) + " + 10 x 100 x 1), found " + (whole - 300)) && !m.contains("holds something else"), m);
        DatasetRoot r = DatasetRoot.of(root, false);
        assertEquals("x, found 42 (the gzip stream is truncated)", r.forClients("x, found 42 (the gzip stream is truncated)"));
        assertEquals("x (the file holds something else)", r.forClients("x, found 'SECRET 42'"));
        assertEquals("x (the file holds something else)", r.forClients("x, found 42 SECRET"));
    }

    @Test
    void linksInsideTheRootAreServed() throws Exception {
        Files.createSymbolicLink(root.resolve("alias"), root.resolve("train"));
        try (PrefetchClient c = client("alias").open()) {
            long n = 0;
            for (RemoteBatch b : c) {
                try (b) {
                    n += b.records();
                }
            }
            assertEquals(RECORDS, n);
        }
        awaitSessions(0);
    }

    /** A root given as {@code .}, or relative through a link and {@code ..}, names the server's allocators by its real path. */
    @Test
    void theServersAllocatorsAreNamedByTheRootsRealPath() throws Exception {
        Path real = root.toRealPath();
        Files.createSymbolicLink(outside.resolve("via-link"), real);
        Path cwd = Path.of("").toAbsolutePath();
        for (Path given : new Path[] {cwd.relativize(outside.resolve("via-link").resolve("train").resolve("..")), Path.of(".")}) {
            Path expected = given.toRealPath();
            try (var parent = new org.apache.arrow.memory.RootAllocator();
                 PrefetchServer s = PrefetchServer.builder(given).arrowAllocator(parent).start()) {
                assertEquals("prefetch server of " + expected + " (memory budget " + ServerLimits.defaults().memoryBudget() + " B)",
                        s.allocator().name(), given.toString());
                assertEquals("prefetch server of " + expected, s.arrowAllocator().getName(), given.toString());
            }
        }
    }

    @Test
    void aMissingRootIsNamedMissingAndAFileAsRootNotADirectory() throws Exception {
        Path missing = outside.resolve("no-such-root");
        var gone = assertThrows(IOException.class, () -> DatasetRoot.of(missing, false));
        assertEquals("dataset root " + missing + " does not exist", gone.getMessage());
        Path file = Files.writeString(outside.resolve("a-file"), "x");
        var notDir = assertThrows(IOException.class, () -> DatasetRoot.of(file, false));
        assertEquals("dataset root " + file + " is not a directory", notDir.getMessage());
    }

    @Test
    void aSystemDirectoryAsRootIsRefusedWithoutTheFlag() throws Exception {
        for (String dir : new String[] {"/", "/etc", "/usr", "/home", "/usr/lib", "/usr/bin", "/lib", "/var/lib"}) {
            if (!Files.isDirectory(Path.of(dir))) {
                continue; // not on this machine
            }
            var e = assertThrows(IOException.class, () -> PrefetchServer.builder(Path.of(dir)).start().close(), dir);
            assertTrue(e.getMessage().contains("is a system directory") && e.getMessage().contains("--allow-system-root"),
                    e.getMessage());
        }
        // a link to / is judged by where it leads
        Files.createSymbolicLink(outside.resolve("slash"), Path.of("/"));
        assertThrows(IOException.class, () -> PrefetchServer.builder(outside.resolve("slash")).start().close());
        try (PrefetchServer s = PrefetchServer.builder(Path.of("/")).allowSystemRoot().start()) {
            assertEquals(Path.of("/"), s.root());
        }
    }
}
