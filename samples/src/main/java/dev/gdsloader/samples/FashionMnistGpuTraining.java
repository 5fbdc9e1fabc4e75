package dev.gdsloader.samples;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Trains the 784-256-128-10 MLP ({@link GpuMlp}: cuBLAS and NVRTC kernels) on Fashion-MNIST on the GPU, fed
 * by the loader from Arrow IPC shards with a global shuffle (a new order every epoch). The training stream
 * waits on each batch's ready event ({@link Batch#awaitOn}) and releases the batch on that stream
 * ({@link Batch#release}): the host never synchronises per batch, only once per epoch to read the loss.
 *
 * <p>Per epoch it prints mean training loss, test accuracy, samples/s (training records over the epoch's wall
 * time, stream drained) and the share of that time the loop waited for data (the loader's stall time).
 * Hyperparameters are those of the CPU fallback ({@link FashionMnistTraining}) and of the PyTorch twin
 * {@code samples/python/fashion_mnist_mlp.py}: SGD lr 0.01, momentum 0.9, batch 64, He-normal weights.
 *
 * <p>Usage: {@code FashionMnistGpuTraining IDX_DIR WORK_DIR [EPOCHS [PATH [IO_THREADS]]]}: epochs default 10,
 * path {@code AUTO} (or {@code MAPPED}, {@code GDS}, {@code BOUNCE}), I/O threads the loader's default (4).
 */
public final class FashionMnistGpuTraining {
    private static final int BATCH = 64;
    private static final int TEST_BATCH = 1000;
    /** The paths that deliver batches in device memory, which the model reads. */
    static final java.util.List<ReadPath> DEVICE_PATHS = java.util.List.of(ReadPath.AUTO, ReadPath.MAPPED, ReadPath.GDS,
            ReadPath.BOUNCE);

    private FashionMnistGpuTraining() {
    }

    /**
     * @param args IDX directory, work directory, epochs, read path, I/O threads
     * @throws Exception only on a bug: a user's error (no GPU, bad argument, missing file) exits 2 with one line
     */
    public static void main(String[] args) throws Exception {
        SampleMain.run("FashionMnistGpuTraining", "IDX_DIR WORK_DIR [EPOCHS [AUTO|MAPPED|GDS|BOUNCE [IO_THREADS]]]", 2, 5, args, a -> {
            int epochs = a.length > 2 ? SampleMain.positive("EPOCHS", a[2]) : 10;
            ReadPath path = a.length > 3 ? SampleMain.readPath("PATH", a[3], DEVICE_PATHS) : ReadPath.AUTO;
            int ioThreads = a.length > 4 ? SampleMain.positive("IO_THREADS", a[4]) : 4;
            double accuracy = train(Path.of(a[0]), Path.of(a[1]), epochs, path, ioThreads, System.out);
            System.out.printf(Locale.ROOT, "final test accuracy %.4f%n", accuracy);
        });
    }

    /**
     * @param idxDir directory with the four Fashion-MNIST IDX files
     * @param work where the Arrow shards are written (reused when present)
     * @param epochs training epochs
     * @param path the loader's read path (not {@code HOST}: the model reads device memory)
     * @param ioThreads the loader's I/O threads
     * @param log per-epoch lines
     * @return the final test accuracy
     * @throws IOException if the data cannot be converted or read
     * @throws dev.gdsloader.cuda.CudaException if there is no GPU, cuBLAS or NVRTC
     */
    static double train(Path idxDir, Path work, int epochs, ReadPath path, int ioThreads, PrintStream log)
            throws IOException {
        if (path == ReadPath.HOST) {
            throw new IllegalArgumentException("the GPU model needs batches in device memory: use AUTO, MAPPED, GDS or BOUNCE");
        }
        if (!Cuda.availability().available()) { // before converting anything
            throw new IllegalStateException("needs a GPU: " + Cuda.availability().reason()
                    + " (FashionMnistTraining is the CPU version)");
        }
        FashionMnistShards.prepare(idxDir, work);
        CudaDevice.makeCurrent(0);
        double accuracy = 0;
        try (CudaStream stream = CudaStream.create();
             GpuMlp model = new GpuMlp(stream, 7, 0.01f, 0.9f, Math.max(BATCH, TEST_BATCH));
             GdsLoader train = GdsLoader.builder(work.resolve("train")).batchSize(BATCH).path(path)
                     .ioThreads(ioThreads).shuffle(Shuffle.GLOBAL, 11).build();
             GdsLoader test = GdsLoader.builder(work.resolve("test")).batchSize(TEST_BATCH).path(path).build()) {
            log.println("device " + CudaDevice.get(0).name() + "; " + ioThreads + " I/O threads; path " + train.pathReason());
            for (int e = 0; e < epochs; e++) {
                long t0 = System.nanoTime();
                long seen = epoch(train, stream, model::trainStep);
                float lossSum = model.takeLossSum(); // drains the stream: the epoch's work is done
                double seconds = (System.nanoTime() - t0) / 1e9;
                double waited = train.stats().stallNanos() / 1e9;
                accuracy = evaluate(model, test, stream);
                log.printf(Locale.ROOT, "epoch %d: loss %.4f, test accuracy %.4f, %.0f samples/s, waited for data %.1f%% of the epoch%n",
                        e, lossSum / seen, accuracy, seen / seconds, 100 * waited / seconds);
            }
        }
        return accuracy;
    }

    private static double evaluate(GpuMlp model, GdsLoader test, CudaStream stream) {
        long total = epoch(test, stream, model::evaluate);
        return model.takeCorrect() / (double) total;
    }

    /** Enqueues work on one batch's device columns. */
    private interface Step {
        void enqueue(long images, long labels, int records);
    }

    /**
     * One epoch, stream-ordered: for each batch the stream waits on its ready event, the step is enqueued, and
     * the batch is released on the stream (the loader refills its slot once the stream gets there).
     *
     * @return records fed to the step
     */
    private static long epoch(GdsLoader loader, CudaStream stream, Step step) {
        long records = 0;
        for (Batch b : loader) {
            b.awaitOn(stream);
            step.enqueue(b.column("images").devicePointer(), b.column("labels").devicePointer(), b.records());
            b.release(stream);
            records += b.records();
        }
        return records;
    }
}
