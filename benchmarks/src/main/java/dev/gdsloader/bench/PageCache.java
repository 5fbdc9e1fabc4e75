package dev.gdsloader.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Drops the Linux page cache so the next reads come from storage ("cold"): {@code sync}, then writing
 * {@code 3} to {@code /proc/sys/vm/drop_caches} (kernel documentation, {@code Documentation/admin-guide/sysctl/vm.rst}).
 * Needs root; where it is not permitted, {@link #drop()} says so instead of pretending.
 */
public final class PageCache {
    private static final Path DROP = Path.of("/proc/sys/vm/drop_caches");

    private PageCache() {
    }

    /**
     * Writes dirty pages back ({@code sync}), so that later {@code O_DIRECT} reads do not wait for them.
     */
    public static void sync() {
        try {
            new ProcessBuilder("sync").inheritIO().start().waitFor();
        } catch (IOException e) {
            // no sync binary: O_DIRECT reads still flush what they overlap, only slower
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Lets the kernel finish reclaiming the dropped pages before the next measurement starts. */
    private static void settle() {
        try {
            Thread.sleep(SETTLE_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Pause after a drop, ms: the first reads right after one were seen to run slow on the VMs here. */
    static final long SETTLE_MILLIS = 1000;

    /**
     * @return null if the cache was dropped, else one line saying why it could not be
     */
    public static String drop() {
        try {
            sync();
            Files.writeString(DROP, "3\n");
            settle();
            return null;
        } catch (IOException e) {
            return "cannot drop the page cache (" + DROP + ": " + e.getMessage() + "; needs root): reads may be warm";
        }
    }

    /**
     * Warms the page cache with {@code files}: reads each once from start to end with buffered reads (8 MiB at a
     * time into one direct buffer), dropping nothing, so later buffered reads and mappings find them in memory (as
     * far as memory holds them).
     *
     * @param files the files to read
     * @return bytes read
     * @throws IOException naming the file that could not be read
     */
    public static long warm(java.util.Collection<Path> files) throws IOException {
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(8 << 20);
        long total = 0;
        for (Path f : files) {
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.READ)) {
                for (int n; (n = ch.read(buf.clear())) > 0; ) {
                    total += n;
                }
            } catch (IOException e) {
                throw new IOException(f + ": cannot read it to warm the page cache: " + e.getMessage(), e);
            }
        }
        return total;
    }
}
