package dev.gdsloader.loader.io;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.dataset.Dataset;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The open files of one engine, one per (column, shard), opened on first use and closed together.
 *
 * <p>Thread-safe; a file already open is found without a lock (reads of every piece look it up). The engine owns
 * it and closes it after all I/O has stopped.
 *
 * @param <F> the open-file type (a {@link ShardReader} or a {@code CuFileHandle})
 */
final class OpenFiles<F extends AutoCloseable> implements AutoCloseable {
    /** Opens one file. */
    @FunctionalInterface
    interface Opener<F> {
        F open(RecordLayout shard) throws IOException;
    }

    private final Dataset dataset;
    private final Opener<F> opener;
    private final AtomicReferenceArray<AtomicReferenceArray<F>> files;

    OpenFiles(Dataset dataset, Opener<F> opener) {
        this.dataset = dataset;
        this.opener = opener;
        this.files = new AtomicReferenceArray<>(dataset.columns().size());
        for (int c = 0; c < dataset.columns().size(); c++) {
            files.set(c, new AtomicReferenceArray<>(dataset.columns().get(c).shards().size()));
        }
    }

    /**
     * @return the open file for (column, shard), opening it if needed
     * @throws IOException naming the file if it cannot be opened
     */
    F get(int column, int shard) throws IOException {
        F f = files.get(column).get(shard);
        return f != null ? f : open(column, shard);
    }

    private synchronized F open(int column, int shard) throws IOException {
        F f = files.get(column).get(shard);
        if (f == null) {
            f = opener.open(dataset.columns().get(column).shards().get(shard));
            files.get(column).set(shard, f);
        }
        return f;
    }

    @Override
    public synchronized void close() {
        for (int c = 0; c < files.length(); c++) {
            AtomicReferenceArray<F> l = files.get(c);
            for (int i = 0; i < l.length(); i++) {
                F f = l.getAndSet(i, null);
                if (f != null) {
                    try {
                        f.close();
                    } catch (Exception ignored) {
                        // closing a read-only descriptor has nothing to report
                    }
                }
            }
        }
    }
}
