package dev.gdsloader.loader.io;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.Chunk;
import dev.gdsloader.loader.plan.ColumnPlan;
import dev.gdsloader.loader.plan.Piece;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The staged paths: each piece's 4 KiB-aligned cover is read with {@code pread} ({@code O_DIRECT} where
 * the filesystem allows) into the slot's staging memory, then its useful bytes are copied to their place
 * in the column view, so views are contiguous whatever the records' alignment in the file. Subclasses
 * say where the copy goes (the GPU on the bounce path, host memory on the host path).
 */
abstract class StagedEngine extends IoEngine {
    private final OpenFiles<PosixFile> files;

    StagedEngine(Dataset dataset, long maxIo, boolean direct) {
        super(dataset, maxIo);
        this.files = new OpenFiles<>(dataset, p -> PosixFile.openForRead(p, direct));
    }

    @Override
    public long viewOffset(Slot slot, ColumnPlan plan) {
        return slot.layout().targetOffsets()[plan.column()];
    }

    @Override
    protected void chunks(Slot slot, ColumnPlan plan, List<ChunkRead> out) {
        long staging = slot.layout().stagingOffsets()[plan.column()];
        long view = viewOffset(slot, plan);
        List<Chunk> cs = new ArrayList<>();
        for (Piece p : plan.pieces()) {
            long start = Alignment.down(p.fileStart());
            long end = Alignment.up(p.fileEnd());
            cs.clear();
            ReadPlanner.split(p.shard(), start, end, staging, maxIo, cs);
            for (Chunk c : cs) {
                long from = Math.max(c.fileOffset(), p.fileStart());
                long to = Math.min(c.fileOffset() + c.length(), p.fileEnd());
                out.add(new ChunkRead(plan.column(), c, from, to, view + p.viewOffset() + (from - p.fileStart())));
            }
            staging += end - start;
        }
    }

    @Override
    protected long run(Slot slot, ChunkRead r) throws IOException {
        Chunk c = r.chunk();
        PosixFile f = files.get(r.column(), c.shard());
        long n = f.read(slot.staging(), c.targetOffset(), c.length(), c.fileOffset());
        long needed = r.copyTo() - c.fileOffset();
        if (n < needed) {
            throw new IOException(f.path() + ": short read: " + n + " bytes at offset " + c.fileOffset()
                    + " where " + needed + " were expected (file truncated while loading?)");
        }
        if (r.copyTo() > r.copyFrom()) {
            copy(slot, c.targetOffset() + (r.copyFrom() - c.fileOffset()), r.viewTarget(), r.copyTo() - r.copyFrom());
        }
        return n;
    }

    /**
     * Copies {@code bytes} from staging offset {@code from} to target offset {@code to}.
     */
    protected abstract void copy(Slot slot, long from, long to, long bytes);

    @Override
    public void close() {
        files.close();
    }
}
