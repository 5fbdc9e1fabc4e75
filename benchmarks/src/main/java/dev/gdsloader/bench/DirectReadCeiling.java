package dev.gdsloader.bench;

import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.posix.AlignedMemory;
import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The raw storage ceiling: every shard file read whole, once however many columns it holds, with {@code O_DIRECT pread} (buffered where the
 * filesystem refuses it) in requests of the given size on the given number of threads, into aligned host
 * memory, touching no GPU. The loader paths are measured against this, in the same run.
 */
public final class DirectReadCeiling {
    private DirectReadCeiling() {
    }

    /**
     * Result of a ceiling measurement.
     *
     * @param bytes bytes read
     * @param nanos wall time
     * @param direct whether every file was opened with {@code O_DIRECT}
     */
    public record Result(long bytes, long nanos, boolean direct) {
        /** @return GB/s, 1e9 bytes per second */
        public double gigabytesPerSecond() {
            return nanos == 0 ? 0 : bytes / (double) nanos;
        }
    }

    /**
     * @param dataset the dataset whose shard files are read
     * @param threads reader threads, &ge; 1
     * @param ioBytes request size, a positive multiple of 4 KiB
     * @return bytes, time and whether {@code O_DIRECT} was used
     * @throws IOException on a read error (naming file and offset)
     */
    public static Result measure(Dataset dataset, int threads, long ioBytes) throws IOException {
        // each file once: the columns of one Arrow (npz, safetensors) file share it, and reading it once per column
        // read a 10,000-column file 10,000 times (issue 21, finding 12)
        java.util.Set<Path> files = new java.util.LinkedHashSet<>();
        for (Column c : dataset.columns()) {
            c.shards().forEach(s -> files.add(s.file()));
        }
        record Task(PosixFile file, long offset) { }
        List<Task> tasks = new ArrayList<>();
        List<PosixFile> open = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (AlignedMemory mem = new AlignedMemory(threads * ioBytes, 2L << 20)) {
            boolean direct = true;
            for (Path p : files) {
                PosixFile f = PosixFile.openForRead(p, true);
                open.add(f);
                direct &= f.isDirect();
                long size = java.nio.file.Files.size(p);
                for (long off = 0; off < size; off += ioBytes) {
                    tasks.add(new Task(f, off));
                }
            }
            AtomicInteger next = new AtomicInteger();
            long t0 = System.nanoTime();
            List<Future<Long>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final long base = t * ioBytes;
                fs.add(pool.submit(() -> {
                    long n = 0;
                    for (int i; (i = next.getAndIncrement()) < tasks.size(); ) {
                        Task k = tasks.get(i);
                        n += k.file().read(mem.segment().asSlice(base, ioBytes), k.offset());
                    }
                    return n;
                }));
            }
            long bytes = 0;
            for (Future<Long> f : fs) {
                bytes += f.get();
            }
            return new Result(bytes, System.nanoTime() - t0, direct);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            pool.shutdownNow();
            open.forEach(PosixFile::close);
            assert Alignment.isAligned(ioBytes);
        }
    }
}
