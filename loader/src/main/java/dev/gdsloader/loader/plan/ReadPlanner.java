package dev.gdsloader.loader.plan;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.sampler.EpochOrder;
import java.util.List;

/**
 * Turns an epoch's record order and a batch size into slot plans (which byte ranges of which shards each
 * batch needs, runs of consecutive records of one shard coalesced into one piece; the engines split pieces
 * into I/O requests). Batch {@code k} holds entries {@code [k*B, min((k+1)*B, n))}
 * of the order. Stateless and thread-safe.
 */
public final class ReadPlanner {
    private ReadPlanner() {
    }

    /**
     * @param entries entries in an epoch's order
     * @param batchSize records per batch, &gt; 0
     * @param dropLast whether a short last batch is dropped
     * @return batches in the epoch
     * @throws IllegalArgumentException if batchSize &le; 0
     */
    public static int batches(int entries, int batchSize, boolean dropLast) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batch size must be > 0 records, got " + batchSize);
        }
        // in long: entries + batchSize - 1 overflows an int for a batch size near Integer.MAX_VALUE (0 batches)
        return (int) (dropLast ? entries / batchSize : ((long) entries + batchSize - 1) / batchSize);
    }

    /**
     * Plans batch {@code index} of an epoch into a slot's plan, in place: entries {@code [index * batchSize, ...)} of
     * {@code order}; runs of consecutive records of one shard become one piece, landing at their place in the column
     * view. No allocation (the loader's hot path).
     *
     * @param dataset the dataset
     * @param order the epoch's order for this rank
     * @param index batch index
     * @param batchSize records per full batch
     * @param out the slot's plan, sized for the largest batch
     * @throws IllegalStateException if a column needs more pieces than {@code out} was sized for
     */
    public static void planInto(Dataset dataset, EpochOrder order, long index, int batchSize, SlotPlan out) {
        begin(order, index, batchSize, out);
        fillOrder(out, 0, out.records());
        planPieces(dataset, out);
    }

    /**
     * Looks up entries {@code [from, to)} of the batch begun in {@code out} in the epoch's order (a shuffle computes
     * each: about 100 ns a record under a global shuffle), into the plan's record scratch. Disjoint ranges may be
     * filled by different threads at once, after {@link #begin} and before {@link #planPieces} (which must see every
     * range's writes: the caller orders them, e.g. through an atomic count).
     *
     * @param out the plan, begun for this batch
     * @param from first entry of the batch, {@code 0 <= from <= to}
     * @param to one past the last, {@code <= out.records()}
     */
    public static void fillOrder(SlotPlan out, int from, int to) {
        long[] ids = out.recordScratch(out.records());
        EpochOrder order = out.order();
        int first = out.from();
        for (int i = from; i < to; i++) {
            ids[i] = order.get(first + i);
        }
    }

    /**
     * Turns the batch's record indices ({@link #fillOrder}, every entry filled) into pieces, column by column:
     * consecutive records of one shard become one piece.
     *
     * @param dataset the dataset
     * @param out the plan, its order filled
     * @throws IllegalStateException if a column needs more pieces than {@code out} was sized for
     */
    public static void planPieces(Dataset dataset, SlotPlan out) {
        long[] ids = out.recordScratch(out.records());
        List<Column> columns = dataset.columns();
        for (int c = 0; c < columns.size(); c++) {
            planColumn(columns.get(c), ids, out.records(), out.column(c));
        }
    }

    /**
     * Names the batch {@code out} is about to hold (index, epoch order, first entry, records) and empties its pieces,
     * so that the batch can be described ({@link SlotPlan#describe()}) before {@link #planInto} has filled it, from
     * another thread (the loader plans batches on its I/O pool and may report a timeout before planning ran).
     *
     * @param order the epoch's order for this rank
     * @param index batch index
     * @param batchSize records per full batch
     * @param out the slot's plan
     */
    public static void begin(EpochOrder order, long index, int batchSize, SlotPlan out) {
        int from = Math.toIntExact(index * batchSize);
        int records = Math.min(batchSize, order.size() - from);
        out.reset(index, order, from, records);
        out.recordScratch(records); // grown here, before threads fill it
    }

    private static void planColumn(Column column, long[] ids, int records, ColumnPieces out) {
        int i = 0;
        int end = records;
        long next = end > 0 ? ids[0] : 0;
        while (i < end) {
            long first = next;
            int shard = column.shardOf(first);
            RecordLayout layout = column.shards().get(shard);
            long local = first - column.firstRecordOf(shard);
            long count = 1;
            while (i + count < end) {
                next = ids[(int) (i + count)];
                if (next != first + count || local + count >= layout.recordCount()) {
                    break;
                }
                count++;
            }
            long offset = layout.dataOffset() + local * layout.recordBytes();
            out.add(shard, offset, offset + count * layout.recordBytes());
            i += (int) count;
        }
    }
}
