package dev.gdsloader.posix;

import java.io.IOException;
import java.nio.file.Path;

/**
 * How a loader opens its shard files: by path ({@link #byPath()}, what a loader without a root does), or beneath a
 * {@link DirectoryRoot} against the identities checked when the dataset was planned ({@link CheckedFiles}, what the
 * prefetch server sets).
 *
 * <p>Implementations are thread-safe: the loader's I/O threads open files concurrently.
 */
public interface ShardOpener {
    /**
     * Opens a shard read-only, as {@link PosixFile#openForRead(Path, boolean)} does.
     *
     * @param file the shard's path, as the dataset names it
     * @param preferDirect whether to try {@code O_DIRECT} first (buffered where the filesystem refuses it)
     * @return the open file, owned by the caller
     * @throws RefusedFileException if the opener refuses the file (a link, a hard link, another file than checked)
     * @throws IOException naming the file and the errno if it cannot be opened
     */
    PosixFile open(Path file, boolean preferDirect) throws IOException;

    /**
     * @return true if files are opened by their paths with nothing checked ({@link #byPath()}): then other ways of
     *     opening a path (a registry that maps shards by path) are as good; false if every open must go through
     *     {@link #open}
     */
    boolean opensByPath();

    /** @return the opener that opens each path as given, following links ({@link PosixFile#openForRead}) */
    static ShardOpener byPath() {
        return ByPath.INSTANCE;
    }

    /** {@link ShardOpener#byPath()}: stateless. */
    enum ByPath implements ShardOpener {
        /** The one instance. */
        INSTANCE;

        @Override
        public PosixFile open(Path file, boolean preferDirect) throws IOException {
            return PosixFile.openForRead(file, preferDirect);
        }

        @Override
        public boolean opensByPath() {
            return true;
        }
    }
}
