package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.io.EngineConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MAPPED path's refusals as the loader reports them, on this machine's real providers: host-decoded shards
 * (any machine) and no GPU (CI). The budget refusal and the immutability check are in {@code MappedEngineTest}
 * (without a GPU) and {@code MappedEngineGpuTest}.
 */
class MappedPathTest {
    private static final EngineConfig CONFIG = new EngineConfig(1 << 20, false, 1 << 20);

    @TempDir
    Path dir;

    @Test
    void hostDecodedShardsAreRefusedNamingTheShard() throws IOException {
        Path data = Files.createDirectories(dir.resolve("npz"));
        Path npy = dir.resolve("x.npy");
        NpyWriter.write(npy, DType.UINT8, new long[] {50, 28, 28}, TestShards.images(0, 50));
        Path archive = data.resolve("train-00000.npz");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(archive))) {
            z.putNextEntry(new ZipEntry("images.npy")); // deflated
            z.write(Files.readAllBytes(npy));
            z.closeEntry();
        }
        Dataset ds = Dataset.open(data);
        IllegalStateException x = assertThrows(IllegalStateException.class,
                () -> PathSelector.select(ReadPath.MAPPED, ds, CONFIG));
        assertEquals("MAPPED path cannot read host-decoded data (the GPU reads a mapped shard's bytes as stored): "
                + "HOST-DECODE: " + archive + " member 'images.npy' is deflated; decoded on the host", x.getMessage());
    }

    @Test
    void withoutAGpuMappedIsRefusedAndAutoTakesHost() throws IOException {
        assumeFalse(Cuda.availability().available(), "this machine has a GPU");
        TestShards.writeImages(dir, 3, 4);
        Dataset ds = Dataset.open(dir);
        IllegalStateException x = assertThrows(IllegalStateException.class,
                () -> PathSelector.select(ReadPath.MAPPED, ds, CONFIG));
        assertEquals("MAPPED path needs a GPU: " + Cuda.availability().reason(), x.getMessage());
        IllegalStateException b = assertThrows(IllegalStateException.class,
                () -> GdsLoader.builder(dir).batchSize(2).path(ReadPath.MAPPED).build());
        assertEquals(x.getMessage(), b.getMessage());
        try (GdsLoader l = GdsLoader.builder(dir).batchSize(2).build()) {
            assertEquals(PathTaken.HOST, l.pathTaken());
            assertEquals("HOST: no GPU path: " + Cuda.availability().reason(), l.pathReason().split("; ")[0]);
        }
    }
}
