package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.EngineProvider;
import dev.gdsloader.loader.io.HostEngine;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Path selection asks the registered providers in order: the first that says yes and opens is taken, and the reason
 * names it and why the first one before it declined. Runs on this machine's real providers (no GPU: HOST) and, for
 * the order and fall-through rules, on providers that decline, fail to open or serve as told.
 */
class PathSelectorTest {
    private static final EngineConfig CONFIG = new EngineConfig(1 << 20, false, 1 << 20);

    @TempDir
    Path dir;

    /** A provider that answers as told and opens a real host engine (or fails to open). */
    private record Told(ReadPath path, boolean serves, String reason, boolean openFails, Optional<String> decodeRefusal)
            implements EngineProvider {
        @Override
        public int preference() {
            return 0; // the test passes its providers in order
        }

        @Override
        public Optional<String> refusesHostDecoded() {
            return decodeRefusal;
        }

        @Override
        public Verdict check(Path dataDir, EngineConfig config, boolean requested) {
            return new Verdict(serves, reason);
        }

        @Override
        public IoEngine<?> open(Dataset dataset, EngineConfig config, Verdict verdict) throws IOException {
            if (openFails) {
                throw new IOException(dataset.root() + "/images-00000.npy: cuFileHandleRegister failed");
            }
            return new HostEngine(dataset, config);
        }
    }

    private Dataset dataset() throws IOException {
        TestShards.writeImages(dir, 3, 4);
        return Dataset.open(dir);
    }

    @Test
    void autoTakesTheFirstProviderThatServesAndOpensAndSaysWhyTheFirstDeclined() throws IOException {
        Dataset ds = dataset();
        List<EngineProvider> ps = List.of(new Told(ReadPath.GDS, false, "cuFile unusable: no nvidia-fs", false, Optional.of("x")),
                new Told(ReadPath.BOUNCE, true, "pinned", true, Optional.empty()),
                new Told(ReadPath.HOST, true, "host memory only", false, Optional.empty()));
        PathSelector.Selection s = PathSelector.select(ReadPath.AUTO, ds, CONFIG, ps);
        try (IoEngine<?> e = s.engine()) {
            assertEquals(PathTaken.HOST, e.pathTaken());
            assertEquals("HOST: cuFile unusable: no nvidia-fs", s.reason());
        }
        List<EngineProvider> opensLater = List.of(new Told(ReadPath.GDS, true, "cuFile mode GDS", true, Optional.of("x")),
                new Told(ReadPath.BOUNCE, true, "pinned", false, Optional.empty()));
        PathSelector.Selection f = PathSelector.select(ReadPath.AUTO, ds, CONFIG, opensLater);
        try (IoEngine<?> e = f.engine()) {
            assertEquals(PathTaken.HOST, e.pathTaken(), "the told BOUNCE provider opens a host engine");
            assertEquals("BOUNCE: GDS refused a shard: " + dir + "/images-00000.npy: cuFileHandleRegister failed", f.reason());
        }
    }

    @Test
    void aMixedDatasetSkipsGdsAndTakesMappedWhoseReasonFollowsTheHostDecodeLine() throws IOException {
        TestShards.writeMixedNpz(dir, 30, 20, 10, 5);
        Dataset ds = Dataset.open(dir);
        Optional<String> gdsRefusal = refusal(ReadPath.GDS);
        Optional<String> mappedRefusal = refusal(ReadPath.MAPPED);
        String staged = "4 host-decoded shard runs decoded on the host and copied through pinned staging";
        List<EngineProvider> ps = List.of(new Told(ReadPath.GDS, true, "cuFile mode GDS", false, gdsRefusal),
                new Told(ReadPath.MAPPED, true, "mappable shards fit; " + staged, false, mappedRefusal),
                new Told(ReadPath.BOUNCE, true, "pinned", false, Optional.empty()));
        String decode = PathSelector.hostDecode(ds).orElseThrow();
        PathSelector.Selection s = PathSelector.select(ReadPath.AUTO, ds, CONFIG, ps);
        try (IoEngine<?> e = s.engine()) {
            assertEquals(PathTaken.HOST, e.pathTaken(), "the told MAPPED provider opens a host engine");
            assertEquals(decode + "; MAPPED: mappable shards fit; " + staged, s.reason());
        }
        PathSelector.Selection asked = PathSelector.select(ReadPath.MAPPED, ds, CONFIG, ps);
        try (IoEngine<?> e = asked.engine()) {
            assertEquals(PathTaken.HOST, e.pathTaken());
            assertEquals(decode + "; MAPPED: requested; mappable shards fit; " + staged, asked.reason());
        }
    }

    /** @return the registered provider's answer to whether it refuses host-decoded shards */
    private static Optional<String> refusal(ReadPath path) {
        return dev.gdsloader.loader.io.Engines.all().stream().filter(p -> p.path() == path).findFirst().orElseThrow()
                .refusesHostDecoded();
    }

    @Test
    void anExplicitPathThatCannotServeFailsWithItsProvidersReason() throws IOException {
        Dataset ds = dataset();
        List<EngineProvider> ps = List.of(new Told(ReadPath.BOUNCE, false, "BOUNCE path needs a GPU: none here", false,
                Optional.empty()));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> PathSelector.select(ReadPath.BOUNCE, ds, CONFIG, ps));
        assertEquals("BOUNCE path needs a GPU: none here", e.getMessage());
    }

    @Test
    void theLoadersOwnEnginesAreRegisteredInAutosOrder() {
        List<ReadPath> own = dev.gdsloader.loader.io.Engines.all().stream()
                .filter(p -> p.getClass().getPackageName().equals("dev.gdsloader.loader.io")).map(EngineProvider::path).toList();
        assertEquals(List.of(ReadPath.MAPPED, ReadPath.GDS, ReadPath.BOUNCE, ReadPath.HOST), own);
    }

    @Test
    void thisMachinesRealProvidersGiveHostWithTheReason() throws IOException {
        Dataset ds = dataset();
        org.junit.jupiter.api.Assumptions.assumeFalse(Cuda.availability().available(),
                "a GPU is here: the GPU suite covers AUTO with a GPU (LoaderGpuTest)");
        PathSelector.Selection s = PathSelector.select(ReadPath.AUTO, ds, CONFIG);
        try (IoEngine<?> e = s.engine()) {
            assertEquals(PathTaken.HOST, e.pathTaken());
            assertEquals("HOST: no GPU path: " + Cuda.availability().reason(), s.reason());
        }
        IllegalStateException b = assertThrows(IllegalStateException.class, () -> PathSelector.select(ReadPath.BOUNCE, ds, CONFIG));
        assertTrue(b.getMessage().startsWith("BOUNCE path needs a GPU: "), b.getMessage());
        IllegalStateException g = assertThrows(IllegalStateException.class, () -> PathSelector.select(ReadPath.GDS, ds, CONFIG));
        assertTrue(g.getMessage().startsWith("GDS path unavailable: "), g.getMessage());
        assertEquals(ReadPath.HOST, PathSelector.decideAuto(dir).path());
    }
}
