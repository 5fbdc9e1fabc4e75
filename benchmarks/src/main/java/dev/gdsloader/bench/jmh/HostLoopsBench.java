package dev.gdsloader.bench.jmh;

import dev.gdsloader.bench.SyntheticDataset;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.npy.NpyHeader;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.sampler.EpochOrder;
import dev.gdsloader.loader.sampler.Sampler;
import dev.gdsloader.loader.sampler.SamplerOptions;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * JMH microbenchmarks of the host-side hot loops, runnable without a GPU:
 * {@code java -cp "cli/target/lib/*" org.openjdk.jmh.Main HostLoopsBench}. Planning a batch (sequential and
 * globally shuffled orders: per-record permutation and coalescing), computing a record index under a global
 * shuffle, CRC32C of a 1 MiB buffer (the bench's verification), and parsing a {@code .npy} header.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class HostLoopsBench {
    /** Records per batch. */
    @Param({"256"})
    public int batch;

    private Path dir;
    private Dataset dataset;

    /** Creates the benchmark state; JMH calls {@link #setUp()} before the first iteration. */
    public HostLoopsBench() {
    }
    private EpochOrder sequential;
    private EpochOrder shuffled;
    private SlotPlan plan;
    private ByteBuffer mib;
    private FileChannel header;
    private Path headerFile;
    private int next;

    /**
     * Writes a 64 MiB, 8-shard dataset of 4 KiB records to a temporary directory.
     *
     * @throws IOException if the files cannot be written
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("gdsloader-jmh-");
        SyntheticDataset.generate(dir, 64L << 20, 8, 4096, 1);
        dataset = Dataset.open(dir);
        long[] shards = dataset.columns().get(0).shards().stream().mapToLong(RecordLayout::recordCount).toArray();
        sequential = new Sampler(SamplerOptions.sequential(), shards, batch).order(0);
        shuffled = new Sampler(SamplerOptions.sequential().withShuffle(Shuffle.GLOBAL, 3), shards, batch).order(0);
        plan = new SlotPlan(new int[] {batch});
        mib = ByteBuffer.allocateDirect(1 << 20);
        headerFile = dataset.columns().get(0).shards().get(0).file();
        header = FileChannel.open(headerFile, StandardOpenOption.READ);
    }

    /**
     * Deletes the dataset.
     *
     * @throws IOException if deleting fails
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        header.close();
        TempDirs.delete(dir);
    }

    private long nextBatch(EpochOrder order) {
        int batches = order.size() / batch;
        next = (next + 1) % batches;
        return next;
    }

    /** @return pieces planned for one sequential batch (one piece, or two across a shard boundary) */
    @Benchmark
    public int planSequentialBatch() {
        ReadPlanner.planInto(dataset, sequential, nextBatch(sequential), batch, plan);
        return plan.column(0).count();
    }

    /** @return pieces planned for one globally shuffled batch (about one per record) */
    @Benchmark
    public int planShuffledBatch() {
        ReadPlanner.planInto(dataset, shuffled, nextBatch(shuffled), batch, plan);
        return plan.column(0).count();
    }

    /** @return the record at one position of a globally shuffled epoch (a Feistel permutation) */
    @Benchmark
    public long shuffledRecordIndex() {
        next = (next + 7919) % shuffled.size();
        return shuffled.get(next);
    }

    /** @return CRC32C of 1 MiB, as the bench verifies every batch */
    @Benchmark
    public long crc32cOfOneMiB() {
        CRC32C crc = new CRC32C();
        crc.update(mib.clear());
        return crc.getValue();
    }

    /**
     * @return the data offset read from a {@code .npy} header
     * @throws IOException if reading fails
     */
    @Benchmark
    public long parseNpyHeader() throws IOException {
        return NpyHeader.read(header.position(0), headerFile).dataOffset();
    }
}
