package dev.gdsloader.loader.io;

import dev.gdsloader.formats.HostDecodedRecords;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.ref.SoftReference;
import java.nio.file.Path;

/**
 * A host-decoded shard (one compressed Arrow record batch column, one deflated {@code .npz} member) read by the
 * staged paths: decoded whole on first use into a heap array, then each chunk copied from it into staging, so the
 * normal copy (pinned staging to device, or to the host view) follows. The decoded bytes are kept while memory
 * allows (a soft reference: a later batch of the same shard does not decode again; under memory pressure the
 * garbage collector may drop them and the next read decodes anew).
 *
 * <p>Thread-safe: concurrent chunks of one shard decode it once.
 */
final class DecodedShardReader implements ShardReader {
    private final HostDecodedRecords shard;
    private SoftReference<byte[]> decoded = new SoftReference<>(null);

    DecodedShardReader(HostDecodedRecords shard) {
        this.shard = shard;
    }

    private synchronized byte[] bytes() throws IOException {
        byte[] b = decoded.get();
        if (b == null) {
            b = shard.decode();
            decoded = new SoftReference<>(b);
        }
        return b;
    }

    @Override
    public long read(MemorySegment base, long offset, long length, long fileOffset) throws IOException {
        byte[] b = bytes();
        long n = Math.max(0, Math.min(length, b.length - fileOffset));
        if (n > 0) {
            MemorySegment.copy(MemorySegment.ofArray(b), fileOffset, base, offset, n);
        }
        return n;
    }

    @Override
    public boolean exact() {
        return true;
    }

    @Override
    public Path path() {
        return shard.file();
    }

    @Override
    public synchronized void close() {
        decoded = new SoftReference<>(null);
    }
}
