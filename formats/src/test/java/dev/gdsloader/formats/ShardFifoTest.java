package dev.gdsloader.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.formats.arrow.ArrowIpcFile;
import dev.gdsloader.formats.idx.IdxReader;
import dev.gdsloader.formats.npy.NpyHeader;
import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.formats.npy.NpzArchive;
import dev.gdsloader.formats.raw.RawShard;
import dev.gdsloader.formats.safetensors.SafetensorsFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every shard reader refuses a FIFO (a real one, made with {@code mkfifo}) before opening it: opening a FIFO for
 * reading blocks until a writer comes, so {@code gdsloader inspect FIFO.npy} used to hang forever.
 */
class ShardFifoTest {
    @TempDir
    Path dir;

    /** A reader's open. */
    @FunctionalInterface
    interface Opener {
        void open(Path file) throws IOException;
    }

    static Stream<Arguments> readers() {
        return Stream.of(
                Arguments.of("x.npy", (Opener) NpyShard::open),
                Arguments.of("h.npy", (Opener) NpyHeader::parse),
                Arguments.of("x.arrow", (Opener) ArrowIpcFile::open),
                Arguments.of("x.arrows", (Opener) ArrowIpcFile::open),
                Arguments.of("x.safetensors", (Opener) SafetensorsFile::open),
                Arguments.of("x.bin", (Opener) RawShard::open),
                Arguments.of("x.npz", (Opener) NpzArchive::open),
                Arguments.of("train-images-idx3-ubyte", (Opener) IdxReader::read));
    }

    private Path fifo(String name) throws Exception {
        Path fifo = dir.resolve(name);
        int rc = new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        assumeTrue(rc == 0 && Files.exists(fifo), "mkfifo is not available");
        return fifo;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("readers")
    void everyReaderRefusesAFifoInsteadOfBlocking(String name, Opener opener) throws Exception {
        Path fifo = fifo(name);
        if (name.endsWith(".bin")) {
            Files.writeString(dir.resolve(name + ".json"), "{}");
        }
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            IOException e = assertThrows(IOException.class, () -> opener.open(fifo));
            assertEquals(fifo + ": not a regular file (a FIFO, socket or device): shards must be regular files",
                    e.getMessage());
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("readers")
    void everyReaderNamesASymbolicLinkLoopAndADanglingLinkAsSuch(String name, Opener opener) throws Exception {
        Path loop = Files.createSymbolicLink(dir.resolve(name), Path.of(name)); // a link to itself
        if (name.endsWith(".bin")) {
            Files.writeString(dir.resolve(name + ".json"), "{}");
        }
        IOException e = assertThrows(IOException.class, () -> opener.open(loop));
        assertEquals(loop + ": not a regular file (a symbolic link loop): shards must be regular files", e.getMessage());
        Files.delete(loop);
        Path dangling = Files.createSymbolicLink(dir.resolve(name), dir.resolve("gone"));
        e = assertThrows(IOException.class, () -> opener.open(dangling));
        assertEquals(dangling + ": not a regular file (a symbolic link to nothing): shards must be regular files",
                e.getMessage());
    }

    @Test
    void aRawShardWhoseSidecarIsAFifoIsRefusedNamingTheSidecar() throws Exception {
        Path bin = dir.resolve("x.bin");
        Files.write(bin, new byte[4]);
        Path sidecar = fifo("x.bin.json");
        Executable open = () -> RawShard.open(bin);
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            IOException e = assertThrows(IOException.class, open);
            assertEquals(sidecar + ": not a regular file (a FIFO, socket or device): shards must be regular files",
                    e.getMessage());
        });
    }

    @Test
    void aMissingFileIsStillReportedByTheOpen() {
        assertThrows(java.nio.file.NoSuchFileException.class, () -> NpyShard.open(dir.resolve("missing.npy")));
    }

    @Test
    void aFifoNamedDatasetJsonIsRefusedInsteadOfBlockingTheManifestRead() throws Exception {
        Path fifo = fifo("dataset.json");
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            IOException e = assertThrows(IOException.class, () -> dev.gdsloader.formats.manifest.DatasetManifest.read(fifo));
            assertEquals(fifo + ": not a regular file (a FIFO, socket or device): a dataset manifest must be a regular file",
                    e.getMessage());
        });
    }
}
