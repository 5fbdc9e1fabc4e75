package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.memory.IllegalReferenceCountException;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A device group on the host path, over real shard files, without a GPU: the whole group machinery (one read per batch,
 * every member's consumer on its own thread, the release rule holding the slot until every member released) runs as it
 * does on GPUs, the members sharing the one host slot instead of receiving copies.
 */
class DeviceGroupHostTest {
    static final int N = 40;

    @TempDir
    static Path dir;

    @BeforeAll
    static void writeDataset() throws IOException {
        TestShards.writeImages(dir, 7, 13, 0, 1, 19);
        TestShards.writeLabels(dir, 20, 20);
    }

    /** What one consumer saw of one batch: its records and every column's bytes. */
    record Seen(long index, List<Long> records, List<byte[]> columns) {
        static Seen of(Batch b) {
            List<Long> r = new ArrayList<>();
            for (long x : b.recordIndices()) {
                r.add(x);
            }
            List<byte[]> cols = new ArrayList<>();
            for (ColumnView v : b.columns()) {
                cols.add(v.hostSegment().toArray(ValueLayout.JAVA_BYTE));
            }
            return new Seen(b.index(), r, cols);
        }

        void assertSame(Seen o, String what) {
            assertEquals(index, o.index, what);
            assertEquals(records, o.records, what);
            for (int c = 0; c < columns.size(); c++) {
                assertArrayEquals(columns.get(c), o.columns.get(c), what + ", column " + c);
            }
        }
    }

    private static GdsLoader.Builder builder(int batch) {
        return GdsLoader.builder(dir).batchSize(batch).path(ReadPath.HOST).prefetchDepth(2).shuffle(Shuffle.GLOBAL, 7)
                .maxIoBytes(4096);
    }

    private static List<Seen> plain(GdsLoader.Builder b, long[] storageBytes) throws IOException {
        List<Seen> out = new ArrayList<>();
        try (GdsLoader l = b.build()) {
            for (Batch x : l) {
                try (x) {
                    out.add(Seen.of(x));
                }
            }
            storageBytes[0] = l.stats().storageBytes();
        }
        return out;
    }

    @Test
    @SuppressWarnings("ThreadPriorityCheck") // Thread.yield only varies one member's pace; no result depends on it
    void everyMemberOnItsOwnThreadGetsThePlainLoadersBatchesAndStorageIsReadOnce() throws Exception {
        for (int members : new int[] {1, 2, 3}) {
            long[] plainRead = new long[1];
            List<Seen> want = plain(builder(6), plainRead);
            int[] group = new int[members];
            for (int m = 0; m < members; m++) {
                group[m] = members - 1 - m; // any order of ordinals
            }
            try (GdsLoader l = builder(6).deviceGroup(group).build();
                 java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newThreadPerTaskExecutor(
                         Thread.ofPlatform().daemon().factory())) {
                assertEquals(group[0], l.options().device());
                for (int epoch = 0; epoch < 2; epoch++) {
                    GroupEpoch e = l.groupEpoch();
                    List<CompletableFuture<List<Seen>>> got = new ArrayList<>();
                    for (int m = 0; m < members; m++) {
                        Iterator<Batch> it = e.member(m);
                        int member = m;
                        got.add(CompletableFuture.supplyAsync(() -> {
                            List<Seen> mine = new ArrayList<>();
                            while (it.hasNext()) {
                                try (Batch b = it.next()) {
                                    mine.add(Seen.of(b));
                                    if (member == 1) {
                                        Thread.yield(); // members at different paces
                                    }
                                }
                            }
                            return mine;
                        }, threads)); // a thread per member (the common pool may have one thread on a small machine)
                    }
                    for (int m = 0; m < members; m++) {
                        List<Seen> mine = got.get(m).get(30, TimeUnit.SECONDS);
                        if (epoch == 0) {
                            assertEquals(want.size(), mine.size(), members + " members, member " + m);
                            for (int i = 0; i < want.size(); i++) {
                                want.get(i).assertSame(mine.get(i), members + " members, member " + m + ", batch " + i);
                            }
                        }
                    }
                    GroupEpoch.Stats s = e.stats();
                    assertEquals(Collections.nCopies(members, (long) want.size()), s.memberBatches());
                    assertEquals(want.size(), s.loader().batches(), "each batch read once");
                    if (epoch == 0) {
                        assertEquals(plainRead[0], s.loader().storageBytes(), "storage bytes 1x however many members");
                    }
                    assertEquals(0, s.fanOutBytes(), "the host path copies nothing");
                }
                if (members > 1) {
                    assertTrue(l.pathReason().contains("device group"), l.pathReason());
                    assertThrows(IllegalStateException.class, l::iterator, "a group is consumed per member");
                } else {
                    assertFalse(l.pathReason().contains("device group"), "a group of one is a plain loader: " + l.pathReason());
                }
            }
        }
    }

    @Test
    void aSlotGoesBackOnlyAfterEveryMemberReleasedIt() throws Exception {
        try (GdsLoader l = builder(4).deviceGroup(0, 1).build()) {
            GroupEpoch e = l.groupEpoch();
            Iterator<Batch> fast = e.member(0);
            Iterator<Batch> slow = e.member(1);
            fast.next().close();
            fast.next().close();
            // both slots of the ring now hold batches member 1 has not released: member 0 must wait
            CompletableFuture<Batch> third = new CompletableFuture<>();
            Thread.ofPlatform().daemon().start(() -> third.complete(fast.next()));
            assertThrows(TimeoutException.class, () -> third.get(300, TimeUnit.MILLISECONDS));
            assertEquals(2, l.stats().slotsInFlight());
            Batch first = slow.next();
            assertEquals(0, first.index());
            first.close(); // the last release of batch 0: its slot is refilled with batch 2
            Batch b2 = third.get(10, TimeUnit.SECONDS);
            assertEquals(2, b2.index());
            assertThrows(IllegalReferenceCountException.class, first::close, "a member's batch counts its own releases");
            b2.close();
            try (Batch b1 = slow.next()) {
                assertEquals(1, b1.index());
            }
        }
    }

    @Test
    void aNewEpochNamesTheMemberStillHoldingABatchAndReleasesWhatNoMemberTook() throws IOException {
        try (GdsLoader l = builder(4).deviceGroup(0, 1).build()) {
            GroupEpoch e = l.groupEpoch();
            Batch held = e.member(0).next(); // member 1 never takes its copy: the loader releases it
            IllegalStateException x = assertThrows(IllegalStateException.class, l::groupEpoch);
            assertTrue(x.getMessage().contains("member(s) [0]"), x.getMessage());
            held.close();
            GroupEpoch again = l.groupEpoch();
            assertEquals(0, again.member(1).next().index());
            assertThrows(IllegalStateException.class, () -> again.member(1), "one iterator per member");
            assertThrows(IndexOutOfBoundsException.class, () -> again.member(2));
        }
    }

    @Test
    void ranksSplitRecordsAcrossGroupsAndEachGroupSharesItsRanksRecords() throws Exception {
        for (int rank = 0; rank < 2; rank++) {
            GdsLoader.Builder b = builder(5).ranks(rank, 2, Partition.PAD);
            List<Seen> want = plain(b, new long[1]);
            try (GdsLoader l = builder(5).ranks(rank, 2, Partition.PAD).deviceGroup(0, 1).build()) {
                GroupEpoch e = l.groupEpoch();
                Iterator<Batch> a = e.member(0);
                Iterator<Batch> c = e.member(1);
                for (Seen w : want) {
                    try (Batch x = a.next(); Batch y = c.next()) {
                        w.assertSame(Seen.of(x), "rank " + rank + " member 0");
                        w.assertSame(Seen.of(y), "rank " + rank + " member 1");
                    }
                }
                assertFalse(a.hasNext() || c.hasNext());
            }
        }
    }

    @Test
    void groupsAreRefusedAtTheBuilder() {
        assertThrows(IllegalArgumentException.class, () -> builder(4).deviceGroup());
        assertThrows(IllegalArgumentException.class, () -> builder(4).deviceGroup(0, 0));
    }
}
