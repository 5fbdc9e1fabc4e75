package dev.gdsloader.loader.io;

import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.posix.PosixFile;
import dev.gdsloader.posix.ShardOpener;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * Where the staged paths read a shard's bytes from: the file itself ({@code O_DIRECT pread} of aligned covers, or
 * exact reads through the page cache, {@link BufferedShardReader}), or, for
 * {@link HostDecodedRecords} (compressed Arrow bodies, deflated {@code .npz} members), the bytes decoded on the
 * host ({@link DecodedShardReader}), at the offsets the shard's layout gives. Implementations are thread-safe;
 * the engine's {@link OpenFiles} owns them and closes them after all I/O has stopped.
 */
interface ShardReader extends AutoCloseable {
    /**
     * Reads into {@code length} bytes of {@code base} starting at {@code offset}.
     *
     * @param base destination memory (staging)
     * @param offset destination offset, bytes
     * @param length bytes wanted
     * @param fileOffset offset in the shard's byte space (the file, or the decoded bytes), bytes
     * @return bytes read; fewer than {@code length} only at the end
     * @throws IOException naming the shard when the read or the decode fails
     */
    long read(MemorySegment base, long offset, long length, long fileOffset) throws IOException;

    /** @return the shard's file, for messages */
    Path path();

    /**
     * @return the bytes the shard's file holds now, to tell which file was cut when a group of reads failed; the
     *     default, {@link Long#MAX_VALUE}, for readers whose bytes cannot shrink under them
     * @throws IOException naming the file if its size cannot be read
     */
    default long sizeNow() throws IOException {
        return Long.MAX_VALUE;
    }

    /**
     * @return true if reads need no alignment (a buffered descriptor, or decoded bytes): a piece is read exactly,
     *     straight to where it is wanted; false for {@code O_DIRECT}, whose reads cover 4 KiB-aligned ranges
     */
    boolean exact();

    @Override
    void close();

    /**
     * Opens a shard for the staged paths.
     *
     * @param shard the shard's layout
     * @param direct whether to open files with {@code O_DIRECT}
     * @param opener how files are opened: by path, or beneath a server's root as the files checked
     * @return a reader, owned by the caller
     * @throws IOException if the file cannot be opened, or the opener refuses it
     *     ({@link dev.gdsloader.posix.RefusedFileException}, naming the file)
     */
    static ShardReader open(RecordLayout shard, boolean direct, ShardOpener opener) throws IOException {
        if (shard instanceof HostDecodedRecords decoded) {
            return new DecodedShardReader(decoded);
        }
        PosixFile f = opener.open(shard.file(), direct);
        if (!f.isDirect()) { // buffered, or the filesystem refused O_DIRECT: read through the page cache
            return BufferedShardReader.open(f);
        }
        return new ShardReader() {
            @Override
            public long read(MemorySegment base, long offset, long length, long fileOffset) throws IOException {
                return f.read(base, offset, length, fileOffset);
            }

            @Override
            public Path path() {
                return f.path();
            }

            @Override
            public boolean exact() {
                return !f.isDirect();
            }

            @Override
            public void close() {
                f.close();
            }
        };
    }
}
