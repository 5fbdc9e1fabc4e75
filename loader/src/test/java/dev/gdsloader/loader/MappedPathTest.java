package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.EngineProvider;
import dev.gdsloader.loader.io.Engines;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MAPPED path's refusals as the loader reports them, on this machine's real providers: not for host-decoded
 * shards, which it stages (GDS still refuses them), and no GPU (CI). The budget refusal and the immutability check are in {@code MappedEngineTest}
 * (without a GPU) and {@code MappedEngineGpuTest}.
 */
class MappedPathTest {
    private static final EngineConfig CONFIG = new EngineConfig(1 << 20, false, 1 << 20);

    @TempDir
    Path dir;

    @Test
    void aMixedDatasetIsNotRefusedForItsHostDecodedShardsButGdsStillIs() throws IOException {
        TestShards.writeMixedNpz(dir, 30, 20, 10, 5);
        Dataset ds = Dataset.open(dir);
        EngineProvider mapped = Engines.all().stream().filter(p -> p.path() == ReadPath.MAPPED).findFirst().orElseThrow();
        assertEquals(Optional.empty(), mapped.refusesHostDecoded(), "MAPPED stages host-decoded shards");
        String decode = PathSelector.hostDecode(ds).orElseThrow();
        assertTrue(decode.startsWith("HOST-DECODE: " + dir + "/mixed-00000.npz member '"), decode);
        assertTrue(decode.endsWith(".npy' is deflated; decoded on the host (and 3 more host-decoded shard runs)"), decode);
        IllegalStateException g = assertThrows(IllegalStateException.class,
                () -> PathSelector.select(ReadPath.GDS, ds, CONFIG));
        assertEquals("GDS path cannot read host-decoded data (cuFile reads file bytes as stored): " + decode, g.getMessage());
        if (!Cuda.availability().available()) {
            IllegalStateException m = assertThrows(IllegalStateException.class,
                    () -> PathSelector.select(ReadPath.MAPPED, ds, CONFIG));
            assertEquals("MAPPED path needs a GPU: " + Cuda.availability().reason(), m.getMessage(),
                    "refused for the missing GPU, not for the host-decoded shards");
        }
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
            assertEquals("HOST: no GPU path: " + Cuda.availability().reason(), l.pathReason().split("; ", -1)[0]);
        }
    }
}
