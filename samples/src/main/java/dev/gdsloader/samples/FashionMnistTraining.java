package dev.gdsloader.samples;

import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Trains a 784-256-128-10 MLP on Fashion-MNIST fed by the loader with a shuffled sampler. This is the CPU
 * fallback: batches come over the host path and the model is plain Java ({@link Mlp}); the GPU version is
 * {@link FashionMnistGpuTraining} (cuBLAS, NVRTC kernels on the training stream). Per epoch it prints loss, test accuracy, samples/s
 * and the share of the epoch the loop waited for data.
 *
 * <p>Usage: {@code FashionMnistTraining IDX_DIR WORK_DIR [EPOCHS [MAX_TRAIN_RECORDS]]}. The IDX files are
 * converted to Arrow IPC shards in {@code WORK_DIR} the first time ({@link FashionMnistShards}).
 */
public final class FashionMnistTraining {
    private FashionMnistTraining() {
    }

    /** Result of a training run. */
    record Result(double testAccuracy, double lastLoss) {
    }

    /**
     * @param args IDX directory, work directory, epochs (default 2), max training records (default all)
     * @throws Exception only on a bug: a user's error exits 2 with one line
     */
    public static void main(String[] args) throws Exception {
        SampleMain.run("FashionMnistTraining", "IDX_DIR WORK_DIR [EPOCHS [MAX_TRAIN_RECORDS]]", 2, 4, args, a -> {
            int epochs = a.length > 2 ? SampleMain.positive("EPOCHS", a[2]) : 2;
            int max = a.length > 3 ? SampleMain.positive("MAX_TRAIN_RECORDS", a[3]) : Integer.MAX_VALUE;
            Result r = train(Path.of(a[0]), Path.of(a[1]), epochs, max, 64, System.out);
            System.out.printf(Locale.ROOT, "final test accuracy %.4f%n", r.testAccuracy());
        });
    }

    /**
     * @param idxDir directory with the four Fashion-MNIST IDX files
     * @param work where the shards are written (reused when present)
     * @param epochs training epochs
     * @param maxTrain train on at most this many records (the first ones)
     * @param batchSize records per batch
     * @param log per-epoch lines
     * @return the final test accuracy and loss
     * @throws IOException if the data cannot be converted or read
     */
    static Result train(Path idxDir, Path work, int epochs, int maxTrain, int batchSize, java.io.PrintStream log)
            throws IOException {
        FashionMnistShards.prepare(idxDir, work);
        Mlp model = new Mlp(7, 0.01f, 0.9f);
        float loss = 0; // the last epoch's mean training loss
        double accuracy = 0;
        try (GdsLoader train = GdsLoader.builder(work.resolve("train")).batchSize(batchSize).path(ReadPath.HOST)
                .shuffle(Shuffle.GLOBAL, 11).build();
             GdsLoader test = GdsLoader.builder(work.resolve("test")).batchSize(1000).path(ReadPath.HOST).build()) {
            float[] x = new float[batchSize * 784];
            int[] y = new int[batchSize];
            for (int e = 0; e < epochs; e++) {
                long t0 = System.nanoTime();
                long seen = 0;
                double lossSum = 0; // sum of per-record losses: the epoch's mean, not the last minibatch's
                for (Batch b : train) {
                    try (b) {
                        int n = 0;
                        MemorySegment images = b.column("images").hostSegment();
                        MemorySegment labels = b.column("labels").hostSegment();
                        for (int i = 0; i < b.records(); i++) {
                            if (b.recordIndex(i) >= maxTrain) {
                                continue; // a subset: records past the cap are skipped
                            }
                            for (int k = 0; k < 784; k++) {
                                x[n * 784 + k] = (images.get(ValueLayout.JAVA_BYTE, i * 784L + k) & 0xff) / 255f;
                            }
                            y[n++] = labels.get(ValueLayout.JAVA_BYTE, i) & 0xff;
                        }
                        if (n > 0) {
                            lossSum += (double) model.train(x, y, n) * n; // train returns the batch's mean
                            seen += n;
                        }
                    }
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                double waited = train.stats().stallNanos() / 1e9;
                accuracy = evaluate(model, test);
                loss = seen == 0 ? 0 : (float) (lossSum / seen);
                log.printf(Locale.ROOT, "epoch %d: loss %.4f, test accuracy %.4f, %.0f samples/s, waited for data %.1f%% of the epoch%n",
                        e, loss, accuracy, seen / seconds, 100 * waited / seconds);
            }
        }
        return new Result(accuracy, loss);
    }

    private static double evaluate(Mlp model, GdsLoader test) {
        float[] x = new float[1000 * 784];
        int[] pred = new int[1000];
        long right = 0;
        long total = 0;
        for (Batch b : test) {
            try (b) {
                MemorySegment images = b.column("images").hostSegment();
                MemorySegment labels = b.column("labels").hostSegment();
                int n = b.records();
                for (int i = 0; i < n * 784; i++) {
                    x[i] = (images.get(ValueLayout.JAVA_BYTE, i) & 0xff) / 255f;
                }
                model.predict(x, n, pred);
                for (int i = 0; i < n; i++) {
                    right += pred[i] == (labels.get(ValueLayout.JAVA_BYTE, i) & 0xff) ? 1 : 0;
                }
                total += n;
            }
        }
        return right / (double) total;
    }
}
