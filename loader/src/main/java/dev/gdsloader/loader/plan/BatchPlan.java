package dev.gdsloader.loader.plan;

import java.util.List;

/**
 * The reads behind one batch: records {@code [firstRecord, firstRecord + records)} of every column.
 *
 * @param index batch index within the epoch, from 0
 * @param firstRecord global index of the batch's first record
 * @param records number of records in the batch (the last batch may be short)
 * @param columns one plan per column, in dataset column order
 */
public record BatchPlan(long index, long firstRecord, int records, List<ColumnPlan> columns) {
    /** @return useful bytes over all columns */
    public long bytes() {
        return columns.stream().mapToLong(ColumnPlan::bytes).sum();
    }
}
