package dev.gdsloader.loader.io;

import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.memory.MemoryBudgetException;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
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
 * <p>A decode is charged to a host budget (the loader's allocator) while it runs: a shard whose declared decoded size
 * does not fit the budget left is refused with a {@link MemoryBudgetException} naming the file, before anything is
 * inflated; the decoder itself never fills more than the declared size ({@link HostDecodedRecords#decode()}).
 *
 * <p>Thread-safe: concurrent chunks of one shard decode it once.
 */
final class DecodedShardReader implements ShardReader {
    private final HostDecodedRecords shard;
    private final NativeAllocator budget;
    private SoftReference<byte[]> decoded = new SoftReference<>(null);

    /** @param shard the shard; decodes are charged to the process root's host budget */
    DecodedShardReader(HostDecodedRecords shard) {
        this(shard, NativeAllocator.root());
    }

    /**
     * @param shard the shard
     * @param budget the allocator each decode is charged to while it runs
     */
    DecodedShardReader(HostDecodedRecords shard, NativeAllocator budget) {
        this.shard = shard;
        this.budget = budget;
    }

    private synchronized byte[] bytes() throws IOException {
        byte[] b = decoded.get();
        if (b == null) {
            NativeAllocator.Allocation charge = budget.reserve(MemoryKind.HOST, shard.fileSize(), "host decode of "
                    + shard.file() + " (" + shard.fileSize() + " bytes, " + shard.decodeReason() + ")");
            try {
                b = shard.decode();
            } finally {
                charge.release();
            }
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
