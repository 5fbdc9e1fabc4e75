package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LoaderOptions}: its JSON, its checks, and agreement between options, the builder and saved states
 * (including a state in the version-1 JSON that builds before this one wrote), on real shard files.
 */
class LoaderOptionsTest {
    /** What {@code LoaderState.toJson()} wrote before the sampler was nested (version 1), byte for byte. */
    private static final String V1_STATE = "{\"version\":1,\"epoch\":3,\"batchesConsumed\":7,\"records\":100,\"batchSize\":4,"
            + "\"shuffle\":\"SHARD_BLOCKS\",\"seed\":5,\"blockRecords\":2,\"rank\":1,\"worldSize\":2,\"partition\":\"PAD\",\"dropLast\":true}";

    @TempDir
    Path dir;

    private static LoaderOptions everyFieldChanged() {
        return LoaderOptions.defaults().withBatchSize(256)
                .withSampler(SamplerOptions.sequential().withShuffle(Shuffle.SHARD_BLOCKS, -42).withBlockRecords(17)
                        .withRanks(3, 8, Partition.PAD).withDropLast(true))
                .withPath(ReadPath.HOST).withDevice(2).withPrefetchDepth(7).withIoThreads(13).withMaxIoBytes(12288)
                .withDirectIo(false).withColumns(List.of("labels", "images")).withIoTimeoutMillis(1234);
    }

    @Test
    void jsonRoundTripKeepsEveryField() {
        LoaderOptions o = everyFieldChanged();
        assertEquals(o, LoaderOptions.fromJson(o.toJson()));
        assertEquals(LoaderOptions.defaults(), LoaderOptions.fromJson(LoaderOptions.defaults().toJson()));
        assertEquals(LoaderOptions.defaults().withDirectIo(true), LoaderOptions.fromJson(LoaderOptions.defaults().withDirectIo(true).toJson()));
        assertTrue(o.toJson().contains("\"sampler\":{\"shuffle\":\"SHARD_BLOCKS\",\"seed\":-42,\"blockRecords\":17,\"rank\":3,"
                + "\"worldSize\":8,\"partition\":\"PAD\",\"dropLast\":true}"), o.toJson());
    }

    @Test
    void absentJsonFieldsTakeTheDefaultsAndEnumNamesIgnoreCase() {
        LoaderOptions o = LoaderOptions.fromJson("{\"batchSize\":64,\"path\":\"host\",\"sampler\":{\"shuffle\":\"global\",\"seed\":9}}");
        assertEquals(LoaderOptions.defaults().withBatchSize(64).withPath(ReadPath.HOST)
                .withSampler(SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 9)), o);
        assertEquals(LoaderOptions.defaults(), LoaderOptions.fromJson("{}"));
    }

    private static void namesOption(String option, Supplier<?> make) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, make::get);
        assertTrue(e.getMessage().contains(option), "message should name '" + option + "': " + e.getMessage());
    }

    @Test
    void invalidValuesAreRefusedNamingTheOptionWhetherSetByWitherOrJson() {
        LoaderOptions d = LoaderOptions.defaults();
        namesOption("batchSize", () -> d.withBatchSize(-1));
        namesOption("batchSize", d::requireBatchSize);
        namesOption("prefetchDepth", () -> d.withPrefetchDepth(0));
        namesOption("prefetchDepth", () -> d.withPrefetchDepth(65));
        namesOption("ioThreads", () -> d.withIoThreads(0));
        namesOption("maxIoBytes", () -> d.withMaxIoBytes(1000));
        namesOption("device", () -> d.withDevice(-1));
        namesOption("ioTimeoutMillis", () -> d.withIoTimeoutMillis(0));
        namesOption("rank", () -> d.sampler().withRanks(2, 2, Partition.EXACT_ONCE));
        namesOption("worldSize", () -> d.sampler().withRanks(0, 0, Partition.EXACT_ONCE));
        namesOption("blockRecords", () -> d.sampler().withBlockRecords(-1));

        namesOption("prefetchDepth", () -> LoaderOptions.fromJson("{\"prefetchDepth\":0}"));
        namesOption("prefetchDepth", () -> LoaderOptions.fromJson("{\"prefetchDepth\":\"four\"}"));
        namesOption("prefetchDepth", () -> LoaderOptions.fromJson("{\"prefetchDepth\":null}"));
        namesOption("maxIoBytes", () -> LoaderOptions.fromJson("{\"maxIoBytes\":4096.5}"));
        namesOption("sampler.shuffle", () -> LoaderOptions.fromJson("{\"sampler\":{\"shuffle\":\"sideways\"}}"));
        namesOption("rank", () -> LoaderOptions.fromJson("{\"sampler\":{\"rank\":4,\"worldSize\":4}}"));
        namesOption("path", () -> LoaderOptions.fromJson("{\"path\":\"fast\"}"));
        namesOption("columns", () -> LoaderOptions.fromJson("{\"columns\":null}"));
        namesOption("'batchsize'", () -> LoaderOptions.fromJson("{\"batchsize\":4}"));
        namesOption("'sampler.sed'", () -> LoaderOptions.fromJson("{\"sampler\":{\"sed\":4}}"));
        namesOption("JSON object", () -> LoaderOptions.fromJson("[1]"));
        assertThrows(IllegalArgumentException.class, () -> LoaderOptions.fromJson("{\"batchSize\":4} trailing"));
        assertThrows(IllegalArgumentException.class, () -> LoaderOptions.fromJson("not json"));
    }

    @Test
    void aVersionOneStateIsReadWithItsSamplerFieldsAndWrittenAsVersionTwo() {
        LoaderState s = LoaderState.fromJson(V1_STATE);
        LoaderState want = new LoaderState(3, 7, 100, 4, SamplerOptions.sequential().withShuffle(Shuffle.SHARD_BLOCKS, 5)
                .withBlockRecords(2).withRanks(1, 2, Partition.PAD).withDropLast(true));
        assertEquals(want, s);
        String v2 = s.toJson();
        assertEquals("{\"version\":2,\"epoch\":3,\"batchesConsumed\":7,\"records\":100,\"batchSize\":4,\"sampler\":"
                + "{\"shuffle\":\"SHARD_BLOCKS\",\"seed\":5,\"blockRecords\":2,\"rank\":1,\"worldSize\":2,\"partition\":\"PAD\","
                + "\"dropLast\":true}}", v2);
        assertEquals(want, LoaderState.fromJson(v2));
        namesOption("epoch", () -> LoaderState.fromJson(V1_STATE.replace("\"epoch\":3,", "")));
        namesOption("worldSize", () -> LoaderState.fromJson(V1_STATE.replace("\"worldSize\":2", "\"worldSize\":0")));
    }

    @Test
    void theBuilderIsAFrontOverTheOptions() {
        LoaderOptions o = everyFieldChanged();
        GdsLoader.Builder b = GdsLoader.builder(dir).batchSize(256).shuffle(Shuffle.SHARD_BLOCKS, -42).blockRecords(17)
                .ranks(3, 8, Partition.PAD).dropLast(true).path(ReadPath.HOST).device(2).prefetchDepth(7).ioThreads(13)
                .maxIoBytes(12288).directIo(false).columns("labels", "images").ioTimeoutMillis(1234);
        assertEquals(o, b.options());
        assertEquals(o, GdsLoader.builder(dir).options(o).options());
        assertEquals(o.withPrefetchDepth(2), GdsLoader.builder(dir).options(o).prefetchDepth(2).options());
        namesOption("prefetchDepth", () -> GdsLoader.builder(dir).prefetchDepth(0));
    }

    /** A loader built from options JSON, a builder with the same settings, and the state between them agree. */
    @Test
    void aStateSavedByALoaderBuiltFromOptionsResumesABuilderLoaderAndAVersionOneStateResumesToo() throws IOException {
        TestShards.writeImages(dir, 12, 12);
        TestShards.writeLabels(dir, 24);
        LoaderOptions o = LoaderOptions.fromJson("{\"batchSize\":3,\"path\":\"HOST\",\"maxIoBytes\":8192,"
                + "\"sampler\":{\"shuffle\":\"SHARD_BLOCKS\",\"seed\":11}}");
        List<Long> first = new ArrayList<>();
        LoaderState saved;
        try (GdsLoader loader = GdsLoader.builder(dir).options(o).build()) {
            assertEquals(o.withDirectIo(false).withSampler(o.sampler().withBlockRecords(3))
                            .withGdsThresholdBytes(dev.gdsloader.loader.io.GdsEngine.thresholdFromEnvironment(System.getenv())),
                    loader.options(), "the options in force resolve the block size (the batch size), the O_DIRECT choice "
                            + "and the GDS threshold");
            var it = loader.iterator();
            for (int i = 0; i < 3; i++) {
                try (Batch b = it.next()) {
                    first.add(b.recordIndices()[0]);
                }
            }
            saved = loader.state();
        }
        assertEquals(new LoaderState(0, 3, 24, 3, o.sampler().withBlockRecords(3)), saved);
        List<Long> whole = new ArrayList<>();
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(3).path(ReadPath.HOST).maxIoBytes(8192)
                .shuffle(Shuffle.SHARD_BLOCKS, 11).build()) {
            for (Batch b : loader) {
                try (b) {
                    whole.add(b.recordIndices()[0]);
                }
            }
        }
        assertEquals(whole.subList(0, 3), first, "options JSON and builder setters give the same order");
        List<Long> rest = new ArrayList<>();
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(3).path(ReadPath.HOST).maxIoBytes(8192)
                .shuffle(Shuffle.SHARD_BLOCKS, 11).resumeFrom(LoaderState.fromJson(saved.toJson())).build()) {
            for (Batch b : loader) {
                try (b) {
                    rest.add(b.recordIndices()[0]);
                }
            }
        }
        assertEquals(whole.subList(3, whole.size()), rest, "the resumed loader continues with the fourth batch");

        // a state in today's version-1 format resumes a loader built from options
        String v1 = "{\"version\":1,\"epoch\":1,\"batchesConsumed\":2,\"records\":24,\"batchSize\":3,\"shuffle\":\"SHARD_BLOCKS\","
                + "\"seed\":11,\"blockRecords\":3,\"rank\":0,\"worldSize\":1,\"partition\":\"EXACT_ONCE\",\"dropLast\":false}";
        try (GdsLoader loader = GdsLoader.builder(dir).options(o).resumeFrom(LoaderState.fromJson(v1)).build()) {
            Batch b = loader.iterator().next();
            try (b) {
                assertEquals(1, b.epoch());
                assertEquals(2, b.index());
            }
        }
    }
}
