package dev.gdsloader.loader.plan;

import dev.gdsloader.loader.sampler.EpochOrder;
import java.util.List;

/**
 * The reads behind one batch: entries {@code [from, from + records)} of an epoch's order, for every column.
 *
 * @param index batch index within the epoch, from 0
 * @param order the epoch's order for this rank (shared by all its batches, not copied)
 * @param from position of the batch's first entry in {@code order}
 * @param records number of records in the batch (the last batch may be short)
 * @param columns one plan per column, in dataset column order
 */
public record BatchPlan(long index, EpochOrder order, int from, int records, List<ColumnPlan> columns) {
    /** @return useful bytes over all columns */
    public long bytes() {
        return columns.stream().mapToLong(ColumnPlan::bytes).sum();
    }

    /** @return global index of the batch's first record */
    public long firstRecord() {
        return order.get(from);
    }

    /** @return a description for messages, e.g. "batch 3 of epoch 1 (records 40, 41, ... 49)" */
    public String describe() {
        return describe(index, order, from, records);
    }

    static String describe(long index, EpochOrder order, int from, int records) {
        return "batch " + index + " of epoch " + order.epoch() + " (records " + order.get(from)
                + (records > 1 ? (records > 2 ? ", " + order.get(from + 1) + ", ... " : ", ") + order.get(from + records - 1) : "")
                + ")";
    }
}
