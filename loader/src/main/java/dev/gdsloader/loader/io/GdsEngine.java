package dev.gdsloader.loader.io;

import dev.gdsloader.cufile.CuFileHandle;
import dev.gdsloader.cufile.CuFileMode;
import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.slot.Slot;
import dev.gdsloader.loader.slot.SlotLayout;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;

/**
 * The GDS path: {@code cuFileRead} straight into the slot's device memory (registered with cuFile).
 *
 * <p>Layout: the column region starts 4 KiB aligned; the first piece is read from its 4 KiB-aligned file
 * offset to the region's start, so its DMA is aligned and the view begins {@code headPad} bytes in (when that
 * keeps the view 16-byte aligned; otherwise the first piece is read exactly to the region start);
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
        this.files = new OpenFiles<>(dataset, shard -> CuFileHandle.register(shard.file()));
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
    protected Slot allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) throws IOException {
        return Slot.assemble(index, layout, allocator, b -> b.withDevice().withCuFileRegistration());
    }

    @Override
    public long viewOffset(Slot slot, ColumnPieces column) {
        return slot.layout().targetOffsets()[column.column()] + (alignedHead(column) ? column.headPad() : 0);
    }

    /**
     * Whether the first piece can be read from its 4 KiB boundary: only if the view then starts at a device
     * address aligned for any element type (16 bytes). A record that starts off that (a safetensors tensor at an
     * odd offset) is read exactly to the aligned region start instead, and cuFile handles the unaligned read.
     */
    private static boolean alignedHead(ColumnPieces column) {
        return column.headPad() % VIEW_ALIGNMENT == 0;
    }

    /** Device alignment of every column view, bytes: enough for any dtype and for 16-byte vector loads. */
    static final long VIEW_ALIGNMENT = 16;

    @Override
    protected void chunks(Slot slot, ColumnPieces col, SlotLoad out) {
        long region = slot.layout().targetOffsets()[col.column()];
        long view = viewOffset(slot, col);
        for (int i = 0; i < col.count(); i++) {
            // the first piece is read from its 4 KiB boundary to the region start (aligned DMA); later pieces exactly
            boolean aligned = i == 0 && alignedHead(col);
            long start = aligned ? Alignment.down(col.start(i)) : col.start(i);
            long base = aligned ? region : view + col.view(i);
            for (long off = start; off < col.end(i); ) {
                long stop = Math.min(col.end(i), Alignment.down(off) + maxIo);
                out.add(col.column(), col.shard(i), off, stop - off, base + (off - start), 0, 0, 0);
                off = stop;
            }
        }
    }

    @Override
    protected long run(Slot slot, ChunkTask t) throws IOException {
        CuFileHandle h = files.get(t.column, t.shard);
        long n = h.read(slot.device(), t.target, t.length, t.fileOffset);
        if (n < t.length) {
            throw new IOException(h.path() + ": short read: cuFileRead returned " + n + " of " + t.length
                    + " bytes at offset " + t.fileOffset + " (file truncated while loading?)");
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
