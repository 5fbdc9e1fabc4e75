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
}
