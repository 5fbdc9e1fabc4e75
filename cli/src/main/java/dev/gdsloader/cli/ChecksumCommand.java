package dev.gdsloader.cli;

import dev.gdsloader.loader.HostReadback;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.dataset.Column;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.zip.CRC32;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader checksum}: loads a shard or dataset through a path and prints, per column, the CRC32
 * (the zlib / {@code zlib.crc32} polynomial, so Python can check it) of all record bytes in order, as read
 * back from where the loader delivered them.
 */
@Command(name = "checksum", mixinStandardHelpOptions = true,
        description = "Load DATA through a path and print each column's CRC32 (zlib.crc32 of numpy's arr.tobytes()) "
                + "computed from the bytes the loader delivered (copied back from the GPU on device paths).")
final class ChecksumCommand implements Callable<Integer> {
    @Parameters(arity = "1", description = "a .npy shard or a dataset directory")
    Path data;

    @Option(names = "--path", defaultValue = "AUTO", description = "AUTO, MAPPED, GDS, BOUNCE or HOST (default: ${DEFAULT-VALUE})")
    ReadPath path;

    @Option(names = "--batch-size", defaultValue = "1024", description = "records per batch (default: ${DEFAULT-VALUE})")
    int batchSize;

    @Override
    public Integer call() throws Exception {
        Checks.BATCH_SIZE.check(batchSize);
        try (GdsLoader loader = GdsLoader.builder(data).batchSize(batchSize).path(path).build()) {
            List<Column> cols = loader.dataset().columns();
            long max = cols.stream().mapToLong(c -> c.recordBytes() * batchSize).max().orElse(1);
            CRC32[] crcs = new CRC32[cols.size()];
            for (int i = 0; i < crcs.length; i++) {
                crcs[i] = new CRC32();
            }
            try (HostReadback rb = new HostReadback(max, loader.pathTaken().onDevice())) {
                for (Batch b : loader) {
                    rb.await(b);
                    for (int c = 0; c < crcs.length; c++) {
                        crcs[c].update(rb.bytes(b.columns().get(c)).asByteBuffer());
                    }
                    rb.release(b);
                }
            }
            for (int c = 0; c < crcs.length; c++) {
                System.out.printf("%s\t%s\t%d records\tcrc32=%d\tvia %s%n", cols.get(c).name(), data, cols.get(c).recordCount(),
                        crcs[c].getValue(), loader.pathTaken());
            }
        }
        return 0;
    }
}
