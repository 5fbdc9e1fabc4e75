package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.BatchPlan;
import dev.gdsloader.loader.plan.ReadPlanner;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Checksums} and the benchmark's verifying consumer: expected CRC32Cs come from the files, and a
 * byte that changed on disk is caught.
 */
class ChecksumsTest {
    private static final int RECORD = 5000;
    private static final int BATCH = 4; // 20000-byte batches; 10 records per shard, so batch 2 crosses shards

    @TempDir
    Path dir;
    List<Path> shards;

    @BeforeEach
    void generate() throws IOException {
        shards = SyntheticDataset.generate(dir, 3L * 10 * RECORD, 3, RECORD, 11);
    }

    private static void flipByte(Path file, long offset) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, offset);
            b.put(0, (byte) ~b.get(0));
            b.rewind();
            ch.write(b, offset);
        }
    }

    @Test
    void expectedChecksumsAreTheCrc32cOfTheRecordBytesOfEachBatch() throws IOException {
        Dataset d = Dataset.open(dir);
        List<BatchPlan> plans = ReadPlanner.sequential(d, BATCH, false);
        long[][] crc = Checksums.expected(d, plans);
        assertEquals(8, crc.length);
        byte[] all = new byte[30 * RECORD];
        int at = 0;
        for (Path f : shards) {
            byte[] file = Files.readAllBytes(f);
            int from = (int) NpyShard.open(f).dataOffset();
            System.arraycopy(file, from, all, at, file.length - from);
            at += file.length - from;
        }
        for (int b = 0; b < plans.size(); b++) {
            BatchPlan p = plans.get(b);
            CRC32C want = new CRC32C();
            want.update(Arrays.copyOfRange(all, (int) p.firstRecord() * RECORD, (int) (p.firstRecord() + p.records()) * RECORD));
            assertEquals(want.getValue(), crc[b][0], "batch " + b);
        }
    }

    @Test
    void flippingOneByteChangesOnlyTheChecksumOfTheBatchThatHoldsIt() throws IOException {
        Dataset d = Dataset.open(dir);
        List<BatchPlan> plans = ReadPlanner.sequential(d, BATCH, false);
        long[][] before = Checksums.expected(d, plans);
        // record 13 = shard 1, local record 3: in batch 3 (records 12..15)
        Path f = shards.get(1);
        flipByte(f, NpyShard.open(f).dataOffset() + 3L * RECORD + 1234);
        long[][] after = Checksums.expected(d, plans);
        for (int b = 0; b < plans.size(); b++) {
            if (b == 3) {
                assertNotEquals(before[b][0], after[b][0], "batch 3 holds the flipped byte");
            } else {
                assertEquals(before[b][0], after[b][0], "batch " + b);
            }
        }
    }

    @Test
    void theVerifyingConsumerReportsAFailureWhenTheFileChangedAfterTheExpectedSums() throws IOException {
        Dataset d = Dataset.open(dir);
        long[][] expected = Checksums.expected(d, ReadPlanner.sequential(d, BATCH, false));
        Path f = shards.get(2);
        flipByte(f, NpyShard.open(f).dataOffset() + 9L * RECORD); // record 29: the short last batch (28..29)
        try (GdsLoader loader = GdsLoader.builder(d).batchSize(BATCH).path(ReadPath.HOST).maxIoBytes(8192).build();
             VerifyingConsumer v = new VerifyingConsumer(expected, (long) BATCH * RECORD, false)) {
            for (Batch b : loader) {
                v.accept(b);
            }
            assertEquals("FAILED (1)", v.verdict());
            assertTrue(v.firstMismatch().startsWith("batch 7 column 'data' (records 28..29)"), v.firstMismatch());
        }
    }

    @Test
    void theVerifyingConsumerPassesUnchangedFiles() throws IOException {
        Dataset d = Dataset.open(dir);
        long[][] expected = Checksums.expected(d, ReadPlanner.sequential(d, BATCH, false));
        try (GdsLoader loader = GdsLoader.builder(d).batchSize(BATCH).path(ReadPath.HOST).maxIoBytes(8192).build();
             VerifyingConsumer v = new VerifyingConsumer(expected, (long) BATCH * RECORD, false)) {
            for (Batch b : loader) {
                v.accept(b);
            }
            assertEquals("OK", v.verdict());
            assertNull(v.firstMismatch());
            assertEquals(8, loader.stats().batches(), "every batch was released, so the epoch ran to the end");
        }
    }

    @Test
    void aShardShorterThanPlannedFailsNamingTheFileAndOffset() throws IOException {
        Dataset d = Dataset.open(dir);
        List<BatchPlan> plans = ReadPlanner.sequential(d, BATCH, false);
        Path f = shards.get(2);
        long cut = NpyShard.open(f).dataOffset() + 5L * RECORD;
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
            ch.truncate(cut);
        }
        IOException e = assertThrows(IOException.class, () -> Checksums.expected(d, plans));
        assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("offset " + cut), e.getMessage());
    }
}
