package dev.gdsloader.loader.io;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.slot.Slot;
import java.io.IOException;

/**
 * The staged paths: each piece's 4 KiB-aligned cover is read with {@code pread} ({@code O_DIRECT} where
 * the filesystem allows) into the slot's staging memory (host-decoded shards: copied from their decoded bytes,
 * see {@link ShardReader}), then its useful bytes are copied to their place
 * in the column view, so views are contiguous whatever the records' alignment in the file. Subclasses
 * say where the copy goes (the GPU on the bounce path, host memory on the host path).
 */
abstract class StagedEngine extends IoEngine {
    private final OpenFiles<ShardReader> files;

    StagedEngine(Dataset dataset, long maxIo, boolean direct) {
        super(dataset, maxIo);
        this.files = new OpenFiles<>(dataset, shard -> ShardReader.open(shard, direct));
    }

    @Override
    public long viewOffset(Slot slot, ColumnPieces column) {
        return slot.layout().targetOffsets()[column.column()];
    }

    @Override
    protected void chunks(Slot slot, ColumnPieces col, SlotLoad out) {
        long staging = slot.layout().stagingOffsets()[col.column()];
        long view = viewOffset(slot, col);
        for (int i = 0; i < col.count(); i++) {
            long pieceStart = col.start(i);
            long pieceEnd = col.end(i);
            long start = Alignment.down(pieceStart);
            long end = Alignment.up(pieceEnd);
            for (long off = start; off < end; ) {
                long stop = Math.min(end, Alignment.down(off) + maxIo);
                long from = Math.max(off, pieceStart);
                long to = Math.min(stop, pieceEnd);
                out.add(col.column(), col.shard(i), off, stop - off, staging + (off - start), from, to,
                        view + col.view(i) + (from - pieceStart));
                off = stop;
            }
            staging += end - start;
        }
    }

    @Override
    protected long run(Slot slot, ChunkTask t) throws IOException {
        ShardReader f = files.get(t.column, t.shard);
        long n = f.read(slot.staging(), t.target, t.length, t.fileOffset);
        long needed = t.copyTo - t.fileOffset;
        if (n < needed) {
            throw new IOException(f.path() + ": short read: " + n + " bytes at offset " + t.fileOffset
                    + " where " + needed + " were expected (file truncated while loading?)");
        }
        if (t.copyTo > t.copyFrom) {
            copy(slot, t.column, t.target + (t.copyFrom - t.fileOffset), t.viewTarget, t.copyTo - t.copyFrom);
        }
        return n;
    }

    /**
     * Copies {@code bytes} of column {@code column} from staging offset {@code from} to target offset {@code to}
     * (called on an I/O thread, once the bytes are in staging; chunks of one batch call it concurrently, each for
     * its own disjoint range).
     *
     * @param slot the slot the batch lands in
     * @param column the column's index in the dataset
     * @param from byte offset in the slot's staging memory
     * @param to byte offset in the slot's target memory (the column's view)
     * @param bytes bytes to copy
     */
    protected abstract void copy(Slot slot, int column, long from, long to, long bytes);

    @Override
    public void close() {
        files.close();
    }
}
