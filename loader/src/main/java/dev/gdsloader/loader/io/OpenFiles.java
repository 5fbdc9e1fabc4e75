package dev.gdsloader.loader.io;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.dataset.Dataset;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The open files of one engine, one per (column, shard), opened on first use and closed together.
 *
 * <p>Thread-safe; the engine owns it and closes it after all I/O has stopped.
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
    private final List<List<F>> files = new ArrayList<>();

    OpenFiles(Dataset dataset, Opener<F> opener) {
        this.dataset = dataset;
        this.opener = opener;
        for (var c : dataset.columns()) {
            List<F> l = new ArrayList<>();
            for (int i = 0; i < c.shards().size(); i++) {
                l.add(null);
            }
            files.add(l);
        }
    }

    /** @return the path of a shard */
    Path path(int column, int shard) {
        return dataset.columns().get(column).shards().get(shard).file();
    }

    /**
     * @return the open file for (column, shard), opening it if needed
     * @throws IOException naming the file if it cannot be opened
     */
    synchronized F get(int column, int shard) throws IOException {
        F f = files.get(column).get(shard);
        if (f == null) {
            f = opener.open(dataset.columns().get(column).shards().get(shard));
            files.get(column).set(shard, f);
        }
        return f;
    }

    @Override
    public synchronized void close() {
        for (List<F> l : files) {
            for (int i = 0; i < l.size(); i++) {
                F f = l.get(i);
                if (f != null) {
                    try {
                        f.close();
                    } catch (Exception ignored) {
                        // closing a read-only descriptor has nothing to report
                    }
                    l.set(i, null);
                }
            }
        }
    }
}
