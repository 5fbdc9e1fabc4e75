package dev.gdsloader.formats;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The check every shard reader (and the manifest and report readers) makes before it opens a file
 * ({@link #requireRegularFile}): a FIFO, device or directory is refused by name instead of blocking or misreading. Which
 * suffixes are shards, and a writer's claim of a directory, live in the format registry
 * ({@code dev.gdsloader.formats.registry.ShardFormats}). Stateless and thread-safe.
 */
public final class ShardFiles {
    private ShardFiles() {
    }

    /**
     * Refuses a path that exists but is not a regular file, before anything opens it: opening a FIFO blocks until a
     * writer comes (forever, for a shard), a device never ends, and a directory is not a shard. A symbolic link that
     * leads nowhere (to nothing, or round in a loop) is refused too, named as such. A path that does not exist at all
     * is left to the caller's open, which reports it ({@link java.nio.file.NoSuchFileException}).
     *
     * @param file the file about to be opened (links are followed)
     * @throws IOException {@code <file>: not a regular file (a FIFO, socket or device): shards must be regular files}
     *     (or {@code (a directory)}, {@code (a symbolic link to nothing)}, {@code (a symbolic link loop)})
     */
    public static void requireRegularFile(Path file) throws IOException {
        if (Files.exists(file) ? !Files.isRegularFile(file) : Files.isSymbolicLink(file)) {
            throw notRegular(file);
        }
    }

    /**
     * Like {@link #requireRegularFile(Path)} for a file that is not a shard: a manifest ({@code dataset.json}) or a saved
     * report, whose reader would block on a FIFO just as a shard reader would.
     *
     * @param file the file about to be opened (links are followed)
     * @param what what the file must be, for the message, e.g. {@code "a dataset manifest"}
     * @throws IOException {@code <file>: not a regular file (<kind>): <what> must be a regular file}
     */
    public static void requireRegularFile(Path file, String what) throws IOException {
        if (Files.exists(file) ? !Files.isRegularFile(file) : Files.isSymbolicLink(file)) {
            throw new IOException(file + ": not a regular file (" + kind(file) + "): " + what + " must be a regular file");
        }
    }

    /**
     * The exception for a path that is not a regular file, worded as {@link #requireRegularFile} words it.
     *
     * @param file the path
     * @return {@code <file>: not a regular file (<kind>): shards must be regular files}
     */
    public static IOException notRegular(Path file) {
        return new IOException(file + ": not a regular file (" + kind(file) + "): shards must be regular files");
    }

    /**
     * Says what a path that is not a regular file is.
     *
     * @param file the path
     * @return {@code "does not exist"}, {@code "a symbolic link to nothing"}, {@code "a symbolic link loop"},
     *     {@code "a directory"} or {@code "a FIFO, socket or device"}
     */
    public static String kind(Path file) {
        if (!Files.exists(file)) {
            if (!Files.isSymbolicLink(file)) {
                return "does not exist";
            }
            return isLinkLoop(file) ? "a symbolic link loop" : "a symbolic link to nothing";
        }
        if (Files.isDirectory(file)) {
            return "a directory";
        }
        return "a FIFO, socket or device";
    }

    /** Links one path resolution may follow before Linux gives up with {@code ELOOP} ({@code MAXSYMLINKS}). */
    private static final int MAX_LINKS = 40;

    /**
     * Follows {@code file}'s symbolic links, its directories' included, as the kernel does when it resolves the path,
     * counting them: read from the links themselves, not from an error's text.
     *
     * @param file a path
     * @return true if resolving it never ends (more than {@value #MAX_LINKS} links, the kernel's {@code ELOOP}), as
     *     for a link to itself or two links to each other; false if it ends, or a link cannot be read
     */
    public static boolean isLinkLoop(Path file) {
        java.util.ArrayDeque<Path> names = new java.util.ArrayDeque<>();
        Path abs = file.toAbsolutePath();
        abs.forEach(names::add);
        Path at = abs.getRoot();
        int links = 0;
        while (!names.isEmpty()) {
            String name = names.pop().toString();
            if (name.equals(".")) {
                continue;
            }
            if (name.equals("..")) {
                at = at.getParent() != null ? at.getParent() : at;
                continue;
            }
            Path next = at.resolve(name);
            if (!Files.isSymbolicLink(next)) {
                at = next;
                continue;
            }
            if (++links > MAX_LINKS) {
                return true;
            }
            Path target;
            try {
                target = Files.readSymbolicLink(next);
            } catch (IOException e) {
                return false;
            }
            java.util.List<Path> parts = new java.util.ArrayList<>();
            target.forEach(parts::add);
            for (int i = parts.size() - 1; i >= 0; i--) {
                names.push(parts.get(i));
            }
            if (target.isAbsolute()) {
                at = target.getRoot();
            }
        }
        return false;
    }
}
