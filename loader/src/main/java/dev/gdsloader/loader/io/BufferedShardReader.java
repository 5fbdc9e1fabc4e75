package dev.gdsloader.loader.io;

import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * A shard read through the page cache, each piece's exact bytes, by buffered {@code pread} (retried on {@code EINTR},
 * continued after partial reads).
 *
 * <p>Pieces were once copied from a read-only mapping of the shard (no system call per piece: about 4x the records/s
 * of {@code pread} for hot 784-byte records). A file cut below the mapped length while it was read then faulted
 * ({@code SIGBUS}); HotSpot raises that as an asynchronous {@link InternalError} at the thread's next safepoint poll,
 * which may fall outside any {@code catch} around the copy, so it killed I/O threads (which the pool replaced, in a
 * loop) or reached the consumer without a file name (issue 21, finding 8). A {@code pread} past the new end of the
 * file returns fewer bytes instead, which {@link StagedReads} reports as an {@link IOException} naming the file and
 * offset.
 *
 * <p>Thread-safe: pieces are read concurrently. Owned by the engine's {@link OpenFiles}; {@link #close()} closes the
 * descriptor, after all I/O has stopped.
 */
final class BufferedShardReader implements ShardReader {
    private final PosixFile file;

    private BufferedShardReader(PosixFile file) {
        this.file = file;
    }

    /**
     * Opens {@code file} buffered.
     *
     * @param file the shard
     * @return the reader, owned by the caller
     * @throws IOException naming the file if it cannot be opened
     */
    static BufferedShardReader open(Path file) throws IOException {
        return open(PosixFile.openForRead(file, false));
    }

    /**
     * A reader over an open file: every piece is read with {@code pread} from this very descriptor (not by the path,
     * which may name another file by now).
     *
     * @param f the shard, open; the reader owns it from now on
     * @return the reader, owned by the caller
     */
    static BufferedShardReader open(PosixFile f) {
        return new BufferedShardReader(f);
    }

    /**
     * {@inheritDoc}
     *
     * @return bytes read; fewer than {@code length} only at the end of the file as it is now (a file cut while it is
     *     read gives a short count here, never a fault)
     */
    @Override
    public long read(MemorySegment base, long offset, long length, long fileOffset) throws IOException {
        return file.read(base, offset, length, fileOffset);
    }

    @Override
    public Path path() {
        return file.path();
    }

    @Override
    public boolean exact() {
        return true;
    }

    @Override
    public void close() {
        file.close();
    }
}
