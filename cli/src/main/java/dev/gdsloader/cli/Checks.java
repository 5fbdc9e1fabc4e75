package dev.gdsloader.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Option checks the commands make before any work starts. Each throws {@link IllegalArgumentException} with a
 * message naming the option as typed ({@code --batch-size}), which {@link GdsLoaderMain#failed} prints as one
 * line with exit 2.
 */
final class Checks {
    /** Room left beyond the data itself: shard headers, manifest, file-system overhead. */
    static final long MARGIN_BYTES = 64L << 20;

    private Checks() {
    }

    /**
     * Applies one flag's value to loader options through a {@code LoaderOptions.with...} method, which checks it;
     * a refusal is rethrown with the flag as typed in front, e.g. {@code --depth 0: prefetchDepth must be 1..64
     * slots, got 0}.
     *
     * @param option the flag's name, e.g. {@code --depth}
     * @param value the value given
     * @param set the wither that takes it, e.g. {@code options::withPrefetchDepth}
     * @param <T> the value's type
     * @return the options with the value set
     * @throws IllegalArgumentException naming the flag and the loader option's check
     */
    static <T> dev.gdsloader.loader.LoaderOptions loaderOption(String option, T value,
                                                               java.util.function.Function<T, dev.gdsloader.loader.LoaderOptions> set) {
        try {
            return set.apply(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + " " + value + ": " + e.getMessage(), e);
        }
    }

    /**
     * A server's native memory budget, as serve and serve-bench allow it: 1 byte to this machine's physical memory
     * ({@link ServeCommand#checkMemoryBudget}); declared so that a size refused before that check (negative, beyond a
     * long) names it too.
     */
    static final Range MEMORY_BUDGET = new Range("--memory-budget", 1,
            dev.gdsloader.memory.NativeAllocator.hostMemoryBytes(), "bytes");

    /** Records per batch, as every command taking {@code --batch-size} allows it. */
    static final Range BATCH_SIZE = new Range("--batch-size", 1, Integer.MAX_VALUE);

    /** The ranges of options many commands share, the same in each: {@link #MEMORY_BUDGET}, {@link #BATCH_SIZE}. */
    static final java.util.List<Range> SHARED_RANGES = java.util.List.of(MEMORY_BUDGET, BATCH_SIZE);

    /**
     * The whole numbers an option allows, declared once as a static field of the command (or of a mixin it holds, or
     * here for options many commands share) and listed by the command's {@link RangedOptions#ranges()}, so that the
     * command's own check and the usage message for a value that does not even fit the option's Java type
     * ({@code --threads 99999999999}) name the same range.
     *
     * @param option the option's name, e.g. {@code --threads}
     * @param min smallest allowed
     * @param max largest allowed ({@link Long#MAX_VALUE}: no upper bound)
     * @param unit what the numbers count, e.g. {@code seconds}, {@code bytes}; empty for plain counts
     */
    record Range(String option, long min, long max, String unit) {
        /**
         * A range of plain counts (no unit).
         *
         * @param option the option's name
         * @param min smallest allowed
         * @param max largest allowed ({@link Long#MAX_VALUE}: no upper bound)
         */
        Range(String option, long min, long max) {
            this(option, min, max, "");
        }

        /**
         * @param value the value given
         * @throws IllegalArgumentException {@code <option> must be <min>..<max> [unit], got <value>} if outside; a
         *     size of 1 MiB or more in {@code bytes} also as {@link ByteSize#format}, e.g. {@code got 3221225472 (3.00 GiB)}
         */
        void check(long value) {
            if (value < min || value > max) {
                throw new IllegalArgumentException(option + " must be " + text() + ", got " + value
                        + (unit.equals("bytes") && value >= 1L << 20 ? " (" + ByteSize.format(value) + ")" : ""));
            }
        }

        /** @return {@code min..max}, or {@code >= min} without an upper bound, then the unit if any */
        String text() {
            return (max == Long.MAX_VALUE ? ">= " + min : min + ".." + max) + (unit.isEmpty() ? "" : " " + unit);
        }

        /**
         * @param command a picocli command object
         * @param option an option's name
         * @return the range the command declares for that option ({@link RangedOptions}), else the one in
         *     {@link Checks#SHARED_RANGES}; empty if neither has one
         */
        static java.util.Optional<Range> declared(Object command, String option) {
            java.util.List<Range> ranges = new java.util.ArrayList<>();
            if (command instanceof RangedOptions r) {
                ranges.addAll(r.ranges());
            }
            ranges.addAll(SHARED_RANGES);
            return ranges.stream().filter(r -> r.option().equals(option)).findFirst();
        }
    }

    /**
     * @param option the option's name, e.g. {@code --threads}
     * @param value its value
     * @param min smallest allowed
     * @param max largest allowed
     * @throws IllegalArgumentException if the value lies outside min..max
     */
    static void range(String option, long value, long min, long max) {
        new Range(option, min, max).check(value);
    }

    /**
     * The directory itself when it exists, else its nearest existing ancestor (the file system the data would go to).
     *
     * @param p a directory that may not exist yet
     * @return the nearest existing ancestor, or {@code p} itself
     */
    static Path nearestExisting(Path p) {
        Path a = p.toAbsolutePath().normalize();
        while (a != null && !Files.exists(a)) {
            a = a.getParent();
        }
        return a == null ? p.toAbsolutePath().getRoot() : a;
    }

    /**
     * Refuses a write of {@code bytes} (plus {@link #MARGIN_BYTES} and 1 %) into {@code dir} when its file
     * system has less usable space.
     *
     * @param bytes data bytes to be written
     * @param dir where they go (need not exist)
     * @throws IllegalArgumentException naming the size, the free space and the directory
     * @throws IOException if the file store cannot be read
     */
    static void freeSpace(long bytes, Path dir) throws IOException {
        Path at = nearestExisting(dir);
        long usable = Files.getFileStore(at).getUsableSpace();
        long need = bytes + MARGIN_BYTES + bytes / 100;
        if (need > usable) {
            throw new IllegalArgumentException("not enough free space: " + ByteSize.format(bytes) + " of data (with margin "
                    + ByteSize.format(need) + ") but only " + ByteSize.format(usable) + " free in " + at);
        }
    }

    /**
     * Creates an output directory and writes and deletes a probe file in it, so a run whose results go there
     * fails before its work rather than after.
     *
     * @param option the option's name, e.g. {@code --out}
     * @param dir the directory
     * @throws IllegalArgumentException naming the option, the directory and why
     */
    static void usableOutputDir(String option, Path dir) {
        try {
            Files.createDirectories(dir);
            Path probe = Files.createTempFile(dir, ".gdsloader-probe-", ".tmp");
            Files.delete(probe);
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalArgumentException(option + " " + dir + ": cannot write there: " + GdsLoaderMain.message(e));
        }
    }

    /**
     * @param program a program as a command line names it: a path (with a {@code /}) or a name looked up on
     *     {@code PATH}
     * @return true if it is a regular executable file there
     */
    static boolean runnable(String program) {
        if (program.contains("/")) {
            Path p = Path.of(program);
            return Files.isRegularFile(p) && Files.isExecutable(p);
        }
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(java.io.File.pathSeparator, -1)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir).resolve(program);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return true;
            }
        }
        return false;
    }
}
