package dev.gdsloader.posix;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A file under a {@link DirectoryRoot} that is refused rather than opened or served: its message names the file and
 * why; {@link #reason()} says why as a value, for callers that act on it.
 */
public final class RefusedFileException extends IOException {
    private static final long serialVersionUID = 1L;

    /** Why a file is refused. */
    public enum Reason {
        /** A component of its path is a symbolic link (links are not followed beneath a root). */
        LINK,
        /** Its path leaves the root ({@code ..}, an absolute path, a link or a mount leading out). */
        OUTSIDE,
        /** It is a regular file with more than one hard link, and the root does not allow them. */
        HARD_LINK,
        /** It is not a regular file (a directory, FIFO, socket or device). */
        NOT_REGULAR,
        /** It is another file (device, inode) than the one checked when the dataset was planned. */
        REPLACED,
        /** It was not among the files checked when the dataset was planned. */
        NOT_CHECKED
    }

    private final transient Path file;
    private final Reason reason;

    RefusedFileException(Path file, Reason reason, String why) {
        super(file + ": refused: " + why);
        this.file = file;
        this.reason = reason;
    }

    /** @return the refused file (its path under the root) */
    public Path file() {
        return file;
    }

    /** @return why it was refused */
    public Reason reason() {
        return reason;
    }
}
