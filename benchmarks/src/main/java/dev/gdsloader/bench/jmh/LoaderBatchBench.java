package dev.gdsloader.bench.jmh;

import dev.gdsloader.bench.SyntheticDataset;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
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
 * One batch of a running HOST loader per operation (buffered reads, served from the page cache once warm; epochs
 * follow each other), for the loader's steady-state cost per batch without a GPU. With JMH's GC profiler the heap
 * bytes per batch are {@code gc.alloc.rate.norm} (B/op; JMH counts every thread's allocation, the loader's reader and
 * I/O threads included):
 * {@code java @bin/jvm-flags -cp "cli/target/lib/*" org.openjdk.jmh.Main LoaderBatchBench -prof gc}.
 * The dataset is 32 MiB of 784-byte records (Fashion-MNIST's size) in 4 shards, in a temporary directory deleted at the
 * end; 4096 records per batch, 4 I/O threads, prefetch depth 4.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(1)
public class LoaderBatchBench {
    /** Record order: {@code NONE} (sequential) or {@code GLOBAL} (a new random permutation every epoch). */
    @Param({"NONE", "GLOBAL"})
    public String shuffle;

    private Path dir;
    private GdsLoader loader;
    private Iterator<Batch> epoch;

    /** Creates the benchmark state; JMH calls {@link #setUp()} before the first iteration. */
    public LoaderBatchBench() {
    }

    /**
     * Writes the dataset and builds the loader.
     *
     * @throws IOException if the files cannot be written or opened
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("gdsloader-jmh-loader-");
        SyntheticDataset.generate(dir, 32L << 20, 4, 784, 1);
        GdsLoader.Builder b = GdsLoader.builder(dir).batchSize(4096).path(ReadPath.HOST).directIo(false).ioThreads(4)
                .prefetchDepth(4);
        if (Shuffle.valueOf(shuffle) != Shuffle.NONE) {
            b.shuffle(Shuffle.valueOf(shuffle), 7);
        }
        loader = b.build();
        epoch = loader.iterator();
    }

    /**
     * Closes the loader and deletes the dataset.
     *
     * @throws IOException if deleting fails
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        loader.close();
        TempDirs.delete(dir);
    }

    /** @return the index of the batch taken and released (the next epoch starts where one ends) */
    @Benchmark
    public long nextBatch() {
        if (!epoch.hasNext()) {
            epoch = loader.iterator();
        }
        try (Batch b = epoch.next()) {
            return b.index();
        }
    }
}
