package dev.gdsloader.loader.plan;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.sampler.EpochOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Test support: an immutable copy of the reads behind one batch (a {@link SlotPlan} as {@link ReadPlanner} fills it),
 * entries {@code [from, from + records)} of an epoch's order, for every column, so that tests compare and keep plans.
 *
 * @param index batch index within the epoch, from 0
 * @param order the epoch's order for this rank (shared by all its batches, not copied)
 * @param from position of the batch's first entry in {@code order}
 * @param records number of records in the batch (the last batch may be short)
 * @param columns one plan per column, in dataset column order
 */
public record BatchPlan(long index, EpochOrder order, int from, int records, List<ColumnPlan> columns) {
    /**
     * Plans every batch of one epoch in sequential order (records 0..N-1).
     *
     * @param dataset the dataset
     * @param batchSize records per batch, &gt; 0
     * @param dropLast whether to drop a short last batch
     * @return the plans, in order
     * @throws IllegalArgumentException if batchSize &le; 0
     */
    public static List<BatchPlan> sequential(Dataset dataset, int batchSize, boolean dropLast) {
        long n = dataset.recordCount();
        long[] all = new long[Math.toIntExact(n)];
        for (int i = 0; i < all.length; i++) {
            all[i] = i;
        }
        EpochOrder order = new EpochOrder(0, all, all.length);
        List<BatchPlan> plans = new ArrayList<>();
        for (int b = 0; b < ReadPlanner.batches(order.size(), batchSize, dropLast); b++) {
            plans.add(plan(dataset, order, b, batchSize));
        }
        return plans;
    }

    /**
     * Plans batch {@code index} of an epoch ({@link ReadPlanner#planInto}) into a slot plan of its own and copies it.
     *
     * @param dataset the dataset
     * @param order the epoch's order for this rank
     * @param index batch index
     * @param batchSize records per full batch
     * @return the plan, an immutable copy
     */
    public static BatchPlan plan(Dataset dataset, EpochOrder order, long index, int batchSize) {
        int records = Math.min(batchSize, order.size() - Math.toIntExact(index * batchSize));
        int[] capacity = new int[dataset.columns().size()];
        java.util.Arrays.fill(capacity, Math.max(1, records));
        SlotPlan p = new SlotPlan(capacity);
        ReadPlanner.planInto(dataset, order, index, batchSize, p);
        return of(p);
    }

    /**
     * @param plan a slot's plan, filled
     * @return an immutable copy of it
     */
    public static BatchPlan of(SlotPlan plan) {
        List<ColumnPlan> cols = new ArrayList<>(plan.columnCount());
        for (int c = 0; c < plan.columnCount(); c++) {
            cols.add(ColumnPlan.of(plan.column(c)));
        }
        return new BatchPlan(plan.index(), plan.order(), plan.from(), plan.records(), List.copyOf(cols));
    }

    /** @return useful bytes over all columns */
    public long bytes() {
        return columns.stream().mapToLong(ColumnPlan::bytes).sum();
    }

    /** @return global index of the batch's first record */
    public long firstRecord() {
        return order.get(from);
    }
}
