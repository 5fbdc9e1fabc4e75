package dev.gdsloader.loader.io;

import dev.gdsloader.cufile.CuFileHandle;
import dev.gdsloader.cufile.CuFileMode;
import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.Chunk;
import dev.gdsloader.loader.plan.ColumnPlan;
import dev.gdsloader.loader.plan.Piece;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.loader.slot.SlotLayout;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The GDS path: {@code cuFileRead} straight into the slot's device memory (registered with cuFile).
 *
 * <p>Layout: the column region starts 4 KiB aligned; the first piece is read from its 4 KiB-aligned file
 * offset to the region's start, so its DMA is aligned and the view begins {@code headPad} bytes in;
 * later pieces (a batch that crosses a shard boundary) are read exactly to their place after it, and
 * cuFile handles their misalignment. Reads never overlap, so all chunks run in parallel.
 */
public final class GdsEngine extends IoEngine {
    private final OpenFiles<CuFileHandle> files;
    private final PathTaken taken;

    /**
     * @param dataset the dataset
     * @param maxIo largest single read, bytes (multiple of 4 KiB)
     * @param mode what the cuFile probe found (GDS or COMPAT), reported as the path taken
     */
    public GdsEngine(Dataset dataset, long maxIo, CuFileMode mode) {
        super(dataset, maxIo);
        this.files = new OpenFiles<>(dataset, CuFileHandle::register);
        this.taken = mode == CuFileMode.GDS ? PathTaken.GDS : PathTaken.CUFILE_COMPAT;
    }

    /**
     * Registers every shard now, so that a file cuFile refuses is found before the first batch.
     *
     * @throws IOException the first registration failure, naming the file and the decoded cause
     */
    public void registerAll() throws IOException {
        for (int c = 0; c < dataset.columns().size(); c++) {
            for (int s = 0; s < dataset.columns().get(c).shards().size(); s++) {
                files.get(c, s);
            }
        }
    }

    @Override
    public PathTaken pathTaken() {
        return taken;
    }

    @Override
    public Slot newSlot(int index, SlotLayout layout) throws IOException {
        Slot.Builder b = new Slot.Builder(index, layout);
        try {
            return b.withDevice().withCuFileRegistration().build();
        } catch (IOException | RuntimeException e) {
            b.abandon();
            throw e;
        }
    }

    @Override
    public long viewOffset(Slot slot, ColumnPlan plan) {
        return slot.layout().targetOffsets()[plan.column()] + plan.headPad();
    }

    @Override
    protected void chunks(Slot slot, ColumnPlan plan, List<ChunkRead> out) {
        long region = slot.layout().targetOffsets()[plan.column()];
        long view = viewOffset(slot, plan);
        List<Chunk> cs = new ArrayList<>();
        for (int i = 0; i < plan.pieces().size(); i++) {
            Piece p = plan.pieces().get(i);
            cs.clear();
            if (i == 0) {
                ReadPlanner.split(p.shard(), Alignment.down(p.fileStart()), p.fileEnd(), region, maxIo, cs);
            } else {
                ReadPlanner.split(p.shard(), p.fileStart(), p.fileEnd(), view + p.viewOffset(), maxIo, cs);
            }
            for (Chunk c : cs) {
                out.add(new ChunkRead(plan.column(), c, 0, 0, 0));
            }
        }
    }

    @Override
    protected long run(Slot slot, ChunkRead r) throws IOException {
        Chunk c = r.chunk();
        CuFileHandle h = files.get(r.column(), c.shard());
        long n = h.read(slot.device(), c.targetOffset(), c.length(), c.fileOffset());
        if (n < c.length()) {
            throw new IOException(h.path() + ": short read: cuFileRead returned " + n + " of " + c.length()
                    + " bytes at offset " + c.fileOffset() + " (file truncated while loading?)");
        }
        return n;
    }

    @Override
    protected void finish(Slot slot) {
        slot.ready().record(slot.stream());
    }

    @Override
    public void close() {
        files.close();
    }
}
