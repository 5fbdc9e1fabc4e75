package dev.gdsloader.loader.io;

import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A shard read through the page cache, each piece's exact bytes: pieces under {@link #MAP_BELOW} bytes are copied
 * from a read-only mapping of the file ({@code mmap}, no system call per piece), larger ones are read with a
 * buffered {@code pread} (one call moves a lot, and the kernel's read-ahead serves streaming). For hot small records
 * the mapping is the cheapest read by far (on the 2-core CI machine, 784-byte records at random: 4.6 M/s copied from
 * a mapping against 0.45 M/s by {@code pread}, one thread); it is what PyTorch's DataLoader reads through with
 * {@code np.load(mmap_mode='r')}.
 *
 * <p>Thread-safe: pieces are read concurrently. Owned by the engine's {@link OpenFiles}; {@link #close()} unmaps
 * and closes the descriptor, after all I/O has stopped.
 */
final class BufferedShardReader implements ShardReader {
    /** Pieces smaller than this many bytes are copied from the mapping; larger ones are read with {@code pread}. */
    static final long MAP_BELOW = 256 << 10;

    private final PosixFile file;
    private final Arena arena;
    private final MemorySegment map;

    private BufferedShardReader(PosixFile file, Arena arena, MemorySegment map) {
        this.file = file;
        this.arena = arena;
        this.map = map;
    }

    /**
     * Opens {@code file} buffered and maps it whole, as long as it is now.
     *
     * @param file the shard
     * @return the reader, owned by the caller
     * @throws IOException naming the file if it cannot be opened or mapped
     */
    static BufferedShardReader open(Path file) throws IOException {
        return open(PosixFile.openForRead(file, false));
    }

    /**
     * Maps an open file whole, as long as it is now: the very file the descriptor is of, reopened through its
     * {@code /proc/self/fd} entry (not by its path, which may name another file by now).
     *
     * @param f the shard, open; the reader owns it from now on (closed here if mapping fails)
     * @return the reader, owned by the caller
     * @throws IOException naming the file if it cannot be mapped
     */
    @SuppressWarnings("MustBeClosedChecker") // the arena goes to the reader, or is closed below on failure
    static BufferedShardReader open(PosixFile f) throws IOException {
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd", Integer.toString(f.fd())), StandardOpenOption.READ)) {
            return new BufferedShardReader(f, arena, ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena));
        } catch (IOException | RuntimeException e) {
            arena.close();
            f.close();
            throw new IOException(f.path() + ": cannot map for reading: " + e.getMessage(), e);
        }
    }

    @Override
    public long read(MemorySegment base, long offset, long length, long fileOffset) throws IOException {
        if (length >= MAP_BELOW) {
            return file.read(base, offset, length, fileOffset);
        }
        long n = Math.max(0, Math.min(length, map.byteSize() - fileOffset));
        if (n > 0) {
            try {
                MemorySegment.copy(map, fileOffset, base, offset, n);
            } catch (InternalError e) { // SIGBUS: the file was cut below the mapped length after it was mapped
                throw new IOException(file.path() + ": " + n + " bytes at offset " + fileOffset + " are gone (file "
                        + "truncated while loading?)", e);
            }
        }
        return n;
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
        arena.close();
        file.close();
    }
}
