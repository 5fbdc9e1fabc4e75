package dev.gdsloader.loader.plan;

import dev.gdsloader.formats.RecordExtent;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a dataset and a batch size into batch plans (which byte ranges of which shards each batch
 * needs, records of one shard coalesced into one piece), and pieces into I/O chunks no larger than the
 * maximum I/O size.
 *
 * <p>Sequential order for now: batch {@code k} holds records {@code [k*B, min((k+1)*B, N))}; with
 * {@code dropLast} a short last batch is dropped. Stateless and thread-safe.
 */
public final class ReadPlanner {
    private ReadPlanner() {
    }

    /**
     * Plans every batch of one epoch in sequential order.
     *
     * @param dataset the dataset
     * @param batchSize records per batch, &gt; 0
     * @param dropLast whether to drop a short last batch
     * @return the plans, in order
     * @throws IllegalArgumentException if batchSize &le; 0
     */
    public static List<BatchPlan> sequential(Dataset dataset, int batchSize, boolean dropLast) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batch size must be > 0 records, got " + batchSize);
        }
        long n = dataset.recordCount();
        List<BatchPlan> plans = new ArrayList<>();
        for (long first = 0, index = 0; first < n; first += batchSize, index++) {
            int records = (int) Math.min(batchSize, n - first);
            if (dropLast && records < batchSize) {
                break;
            }
            plans.add(plan(dataset, index, first, records));
        }
        return plans;
    }

    /**
     * Plans one batch of contiguous records.
     *
     * @param dataset the dataset
     * @param index batch index
     * @param first global index of the first record
     * @param records records in the batch, &gt; 0
     * @return the plan
     */
    public static BatchPlan plan(Dataset dataset, long index, long first, int records) {
        List<ColumnPlan> cols = new ArrayList<>();
        List<Column> columns = dataset.columns();
        for (int c = 0; c < columns.size(); c++) {
            cols.add(planColumn(c, columns.get(c), first, records));
        }
        return new BatchPlan(index, first, records, List.copyOf(cols));
    }

    private static ColumnPlan planColumn(int columnIndex, Column column, long first, int records) {
        List<Piece> pieces = new ArrayList<>();
        long next = first;
        long end = first + records;
        long viewOffset = 0;
        while (next < end) {
            int shard = column.shardOf(next);
            RecordLayout layout = column.shards().get(shard);
            long local = next - column.firstRecordOf(shard);
            long count = Math.min(end - next, layout.recordCount() - local);
            RecordExtent e = layout.extent(local, count);
            pieces.add(new Piece(shard, e.offset(), e.offset() + e.length(), viewOffset));
            viewOffset += e.length();
            next += count;
        }
        return new ColumnPlan(columnIndex, List.copyOf(pieces), viewOffset);
    }

    /**
     * Splits the file range {@code [start, end)} into chunks of at most {@code maxIo} bytes whose
     * boundaries (except {@code start} itself and {@code end}) fall on 4 KiB multiples, landing at
     * {@code targetBase + (offset - start)}.
     *
     * @param shard shard index to stamp on the chunks
     * @param start first file byte
     * @param end one past the last file byte
     * @param targetBase target offset of {@code start}
     * @param maxIo largest chunk, bytes; a multiple of 4 KiB
     * @param out receives the chunks in file order
     * @throws IllegalArgumentException if maxIo is not a positive multiple of 4 KiB
     */
    public static void split(int shard, long start, long end, long targetBase, long maxIo, List<Chunk> out) {
        if (maxIo <= 0 || !Alignment.isAligned(maxIo)) {
            throw new IllegalArgumentException("maximum I/O size must be a positive multiple of 4096 bytes, got " + maxIo);
        }
        long off = start;
        while (off < end) {
            long stop = Math.min(end, Alignment.down(off) + maxIo);
            out.add(new Chunk(shard, off, stop - off, targetBase + (off - start)));
            off = stop;
        }
    }
}
