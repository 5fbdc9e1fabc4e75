package dev.gdsloader.samples;

import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderStats;
import java.nio.file.Path;

/**
 * The smallest training-loop shape: epochs over a dataset, each batch handed to "the model" and released.
 * Usage: {@code EpochLoop DATASET_DIR [BATCH_SIZE [EPOCHS]]}.
 */
public final class EpochLoop {
    private EpochLoop() {
    }

    /**
     * @param args dataset directory, records per batch (default 256), epochs (default 2)
     * @throws Exception if the dataset cannot be loaded
     */
    public static void main(String[] args) throws Exception {
        SampleMain.run("EpochLoop", "DATASET_DIR [BATCH_SIZE [EPOCHS]]", 1, 3, args, EpochLoop::loop);
    }

    private static void loop(String[] args) throws Exception {
        int batchSize = args.length > 1 ? SampleMain.positive("BATCH_SIZE", args[1]) : 256;
        int epochs = args.length > 2 ? SampleMain.positive("EPOCHS", args[2]) : 2;
        try (GdsLoader loader = GdsLoader.builder(Path.of(args[0])).batchSize(batchSize).build()) {
            System.out.println("path: " + loader.pathReason());
            for (int epoch = 0; epoch < epochs; epoch++) {
                long records = 0;
                for (Batch batch : loader) {
                    records += batch.records(); // a real loop launches its kernels on batch.columns() here
                    batch.close();
                }
                LoaderStats s = loader.stats();
                System.out.printf("epoch %d: %d records, %.2f GB/s, waited %.1f ms for data%n",
                        epoch, records, s.gigabytesPerSecond(), s.stallMillis());
            }
        }
    }
}
