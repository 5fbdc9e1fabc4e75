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
        Path dir = target.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
        try {
            Files.write(tmp, bytes);
            try { // temp files are created 0600; a manifest or sidecar must be as readable as its shards
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
            } catch (UnsupportedOperationException ignored) {
                // not a POSIX filesystem: its default permissions apply
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }
}
