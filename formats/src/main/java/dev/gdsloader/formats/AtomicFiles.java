package dev.gdsloader.formats;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Writes small metadata files (a {@code dataset.json}, a raw shard's sidecar) so that a reader never sees a
 * partial one: the bytes go to a temporary sibling, which is made as readable as a shard (0644) and renamed
 * over the target. Stateless and thread-safe.
 */
public final class AtomicFiles {
    private AtomicFiles() {
    }

    /**
     * @param target the file to create or replace; its directory must exist
     * @param bytes its whole content
     * @throws IOException if writing or renaming fails (the old file, if any, is then left in place and the
     *     temporary file removed)
     */
    public static void replace(Path target, byte[] bytes) throws IOException {
        Path tmp = tempSibling(target);
        try {
            Files.write(tmp, bytes);
            publish(tmp, target);
        } catch (IOException | RuntimeException e) {
            deleteQuietly(tmp, e);
            throw e;
        }
    }

    /**
     * Creates an empty temporary file beside {@code target} for a writer that streams a file and {@link #publish
     * publishes} it when complete: a hidden name ({@code .<name><random>.tmp}), which the loader, {@code verify} and
     * the shard registry never take for a shard.
     *
     * @param target the file that will be written; its directory must exist
     * @return the temporary file (empty, mode 0600); the caller publishes or deletes it
     * @throws IOException if it cannot be created
     */
    public static Path tempSibling(Path target) throws IOException {
        return Files.createTempFile(target.toAbsolutePath().getParent(), "." + target.getFileName(), ".tmp");
    }

    /**
     * Makes a complete temporary file (from {@link #tempSibling}) as readable as a shard (0644) and renames it over
     * {@code target}, atomically where the file system allows, so {@code target} is the old file or the whole new one.
     *
     * @param tmp the complete file, in {@code target}'s directory
     * @param target the file to create or replace
     * @throws IOException if the rename fails ({@code tmp} is then left for the caller to delete)
     */
    public static void publish(Path tmp, Path target) throws IOException {
        try { // temp files are created 0600; a shard, manifest or sidecar must be readable like the others
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
        } catch (UnsupportedOperationException ignored) {
            // not a POSIX filesystem: its default permissions apply
        }
        move(tmp, target);
    }

    /**
     * Renames {@code from} over {@code to} in one directory: {@code ATOMIC_MOVE}, or a plain replacing move where
     * the file system has no atomic rename.
     *
     * @param from the existing file
     * @param to its new name, replaced if present
     * @throws IOException if the rename fails
     */
    public static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Deletes {@code file} if present, adding a failure to {@code primary} instead of throwing.
     *
     * @param file the file to delete
     * @param primary the error being reported, which keeps the deletion's failure as suppressed
     */
    public static void deleteQuietly(Path file, Throwable primary) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException suppressed) {
            primary.addSuppressed(suppressed);
        }
    }
}
