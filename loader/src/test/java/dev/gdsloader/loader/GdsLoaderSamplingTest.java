package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Shuffled, rank-sharded and resumed loading on the host path, checked record by record against the files. */
class GdsLoaderSamplingTest {
    @TempDir
    Path dir;

    private GdsLoader.Builder builder(int batch) {
        return GdsLoader.builder(dir).batchSize(batch).path(ReadPath.HOST).maxIoBytes(8192).ioThreads(3);
    }

    /** Checks every sample of the batch against the record its index names, and returns the indices. */
    private static long[] checked(Batch b) {
        long[] ids = b.recordIndices();
        byte[] images = b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE);
        byte[] labels = b.column("labels").hostSegment().toArray(ValueLayout.JAVA_BYTE);
        for (int i = 0; i < ids.length; i++) {
            byte[] want = TestShards.images(ids[i], 1);
            for (int j = 0; j < want.length; j++) {
                if (images[i * TestShards.IMAGE_BYTES + j] != want[j]) {
                    throw new AssertionError("sample " + i + " of batch " + b.index() + " is not record " + ids[i]);
                }
            }
            assertEquals(TestShards.label(ids[i]), labels[i], "label of record " + ids[i]);
        }
        return ids;
    }

    @ParameterizedTest
    @EnumSource(Shuffle.class)
    void everySampleIsTheRecordItsIndexNamesAndEachEpochCoversAllRecordsOnce(Shuffle shuffle) throws IOException {
        TestShards.writeImages(dir, 9, 14, 0, 23);
        TestShards.writeLabels(dir, 46);
        try (GdsLoader loader = builder(5).shuffle(shuffle, 99).blockRecords(3).build()) {
            List<List<Long>> epochs = new ArrayList<>();
            for (int e = 0; e < 3; e++) {
                List<Long> seen = new ArrayList<>();
                for (Batch b : loader) {
                    try (b) {
                        assertEquals(e, b.epoch());
                        for (long id : checked(b)) {
                            seen.add(id);
                        }
                    }
                }
                epochs.add(seen);
                List<Long> sorted = new ArrayList<>(seen);
                Collections.sort(sorted);
                assertEquals(LongStream.range(0, 46).boxed().toList(), sorted, "epoch " + e + " covers every record once");
            }
            if (shuffle != Shuffle.NONE) {
                assertTrue(!epochs.get(0).equals(epochs.get(1)) && !epochs.get(1).equals(epochs.get(2)), "orders differ per epoch");
            }
        }
    }

    @Test
    void twoRanksReceiveDisjointRecordsThatTogetherCoverTheDataset() throws IOException {
        TestShards.writeImages(dir, 22);
        TestShards.writeLabels(dir, 22);
        List<Long> all = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            try (GdsLoader loader = builder(5).shuffle(Shuffle.GLOBAL, 7).ranks(rank, 2, Partition.EXACT_ONCE).build()) {
                for (Batch b : loader) {
                    try (b) {
                        for (long id : checked(b)) {
                            all.add(id);
                        }
                    }
                }
            }
        }
        Collections.sort(all);
        assertEquals(LongStream.range(0, 22).boxed().toList(), all);
    }

    @Test
    void paddedSamplesAreFlaggedInTheirBatch() throws IOException {
        TestShards.writeImages(dir, 3);
        TestShards.writeLabels(dir, 3);
        for (int rank = 0; rank < 7; rank++) {
            try (GdsLoader loader = builder(1).ranks(rank, 7, Partition.PAD).build()) {
                for (Batch b : loader) {
                    try (b) {
                        assertEquals(rank % 3, checked(b)[0]);
                        assertEquals(rank >= 3, b.isPadding(0));
                        assertEquals(rank >= 3 ? 1 : 0, b.paddingCount());
                    }
                }
            }
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> builder(1).ranks(0, 7, Partition.PAD).dropLast(true).build());
        assertTrue(e.getMessage().contains("no batch"), e.getMessage());
    }

    @Test
    void resumeContinuesWithTheNextRecordAndEveryRecordArrivesOncePerEpoch() throws IOException {
        TestShards.writeImages(dir, 40, 60);
        TestShards.writeLabels(dir, 100);
        List<Long> seen = new ArrayList<>();
        LoaderState first;
        try (GdsLoader loader = builder(1).shuffle(Shuffle.GLOBAL, 5).build()) {
            var it = loader.iterator();
            for (int i = 0; i < 5; i++) {
                try (Batch b = it.next()) {
                    seen.add(checked(b)[0]);
                }
            }
            first = loader.state();
        }
        assertEquals(0, first.epoch());
        assertEquals(5, first.batchesConsumed());
        LoaderState second;
        LoaderState restored = LoaderState.fromJson(first.toJson());
        assertEquals(first, restored);
        try (GdsLoader loader = builder(1).shuffle(Shuffle.GLOBAL, 5).resumeFrom(restored).build()) {
            var it = loader.iterator();
            for (int i = 0; i < 30; i++) {
                try (Batch b = it.next()) {
                    assertEquals(5 + i, b.index());
                    seen.add(checked(b)[0]);
                }
            }
            second = loader.state();
        }
        assertEquals(35, second.batchesConsumed(), "the second state is the live position");
        try (GdsLoader loader = builder(1).shuffle(Shuffle.GLOBAL, 5).resumeFrom(LoaderState.fromJson(second.toJson())).build()) {
            for (Batch b : loader) {
                try (b) {
                    seen.add(checked(b)[0]);
                }
            }
            assertEquals(new LoaderState(1, 0, 100, 1, SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 5).withBlockRecords(1)), loader.state(),
                    "after the epoch the state points at the start of the next");
            List<Long> epoch1 = new ArrayList<>();
            for (Batch b : loader) {
                try (b) {
                    epoch1.add(checked(b)[0]);
                }
            }
            Collections.sort(epoch1);
            assertEquals(LongStream.range(0, 100).boxed().toList(), epoch1);
        }
        List<Long> sorted = new ArrayList<>(seen);
        Collections.sort(sorted);
        assertEquals(LongStream.range(0, 100).boxed().toList(), sorted, "across the three runs every record exactly once");
    }

    @Test
    void aStateFromOtherSettingsIsRefusedNamingBoth() throws IOException {
        TestShards.writeImages(dir, 10);
        LoaderState s = new LoaderState(0, 2, 10, 2, SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 5).withBlockRecords(2));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> builder(2).shuffle(Shuffle.GLOBAL, 6).resumeFrom(s).build());
        assertTrue(e.getMessage().contains("\"seed\":5") && e.getMessage().contains("\"seed\":6"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> LoaderState.fromJson("{\"version\":3}"));
        assertThrows(IllegalArgumentException.class, () -> LoaderState.fromJson("{\"version\":2}"));
        assertThrows(IllegalArgumentException.class, () -> LoaderState.fromJson("{\"version\":1}"));
        assertThrows(IllegalArgumentException.class, () -> LoaderState.fromJson("not json"));
    }

    /** A state at epoch Long.MAX_VALUE streamed, and the state after it said epoch Long.MIN_VALUE: refused, named. */
    @Test
    void anEpochNoOtherCanFollowIsRefusedNamingIt() throws IOException {
        TestShards.writeImages(dir, 10);
        for (long epoch : new long[] {Long.MAX_VALUE - 1, Long.MAX_VALUE}) {
            LoaderState s = new LoaderState(epoch, 0, 10, 2, SamplerOptions.sequential().withBlockRecords(2));
            try (GdsLoader loader = builder(2).resumeFrom(s).build()) {
                if (epoch < Long.MAX_VALUE) { // the last epoch that can be followed: it runs, and its state names the next
                    int n = 0;
                    for (Batch b : loader) {
                        try (b) {
                            assertEquals(epoch, b.epoch());
                            n++;
                        }
                    }
                    assertEquals(5, n);
                    assertEquals(Long.MAX_VALUE, loader.state().epoch());
                }
                IllegalStateException e = assertThrows(IllegalStateException.class, loader::iterator);
                assertTrue(e.getMessage().contains("epoch " + Long.MAX_VALUE + " cannot be started"), e.getMessage());
            }
        }
    }

    @Test
    void globalShuffleGathersRecordsFromEverywhereByteExact() throws IOException {
        TestShards.writeImages(dir, 100, 57, 300);
        TestShards.writeLabels(dir, 457);
        try (GdsLoader loader = builder(64).shuffle(Shuffle.GLOBAL, 3).build()) {
            long n = 0;
            for (Batch b : loader) {
                try (b) {
                    n += checked(b).length;
                    assertArrayEquals(b.recordIndices(), LongStream.range(0, b.records()).map(i -> b.recordIndex((int) i)).toArray());
                }
            }
            assertEquals(457, n);
        }
    }
}
