package dev.gdsloader.bench;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.sampler.EpochOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The file bytes behind one batch, per column, in the order they land in the batch's column view: what the bench's
 * expected checksums ({@link Checksums}) and the naive baseline ({@link NaiveBaseline}) read. Worked out here from the
 * dataset's record layouts and the epoch's order alone, not by the loader's read planner, so that a planner bug
 * cannot make the loader and its check agree. Consecutive records of one shard are one range. Immutable.
 *
 * @param index batch index within the epoch, from 0
 * @param firstRecord global index of the batch's first record
 * @param records records in the batch (the last batch may be short)
 * @param columns one entry per column, in dataset column order
 */
public record BatchReads(long index, long firstRecord, int records, List<ColumnReads> columns) {
    /**
     * The ranges of one column of a batch.
     *
     * @param column column index in the dataset
     * @param ranges file ranges in view order
     */
    public record ColumnReads(int column, List<Range> ranges) {
        /** @return bytes of the column view (the ranges' lengths added up) */
        public long bytes() {
            return ranges.stream().mapToLong(Range::length).sum();
        }
    }

    /**
     * Bytes {@code [start, end)} of one shard file.
     *
     * @param shard index of the shard in its column
     * @param start first byte
     * @param end one past the last byte
     */
    public record Range(int shard, long start, long end) {
        /** @return length in bytes */
        public long length() {
            return end - start;
        }
    }

    /** @return bytes over all columns */
    public long bytes() {
        return columns.stream().mapToLong(ColumnReads::bytes).sum();
    }

    /**
     * The batches of one epoch in sequential order (records 0..N-1).
     *
     * @param dataset the dataset
     * @param batchSize records per batch, &gt; 0
     * @param dropLast whether a short last batch is dropped
     * @return one entry per batch, in order
     * @throws IllegalArgumentException if {@code batchSize} &le; 0
     */
    public static List<BatchReads> sequential(Dataset dataset, int batchSize, boolean dropLast) {
        long[] all = new long[Math.toIntExact(dataset.recordCount())];
        for (int i = 0; i < all.length; i++) {
            all[i] = i;
        }
        return epoch(dataset, new EpochOrder(0, all, all.length), batchSize, dropLast);
    }

    /**
     * The batches of one epoch: batch {@code k} holds entries {@code [k * batchSize, (k + 1) * batchSize)} of
     * {@code order} (fewer in a short last batch).
     *
     * @param dataset the dataset
     * @param order the epoch's order for this rank
     * @param batchSize records per batch, &gt; 0
     * @param dropLast whether a short last batch is dropped
     * @return one entry per batch, in order
     * @throws IllegalArgumentException if {@code batchSize} &le; 0
     */
    public static List<BatchReads> epoch(Dataset dataset, EpochOrder order, int batchSize, boolean dropLast) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batch size must be > 0 records, got " + batchSize);
        }
        List<BatchReads> out = new ArrayList<>();
        for (long from = 0; from < order.size(); from += batchSize) {
            int records = (int) Math.min(batchSize, order.size() - from);
            if (records < batchSize && dropLast) {
                break;
            }
            List<ColumnReads> columns = new ArrayList<>();
            for (int c = 0; c < dataset.columns().size(); c++) {
                columns.add(new ColumnReads(c, ranges(dataset.columns().get(c), order, (int) from, records)));
            }
            out.add(new BatchReads(from / batchSize, order.get((int) from), records, List.copyOf(columns)));
        }
        return out;
    }

    /**
     * Each record's bytes, in order: the record after the last one of a range, in the same shard, extends that range
     * (looked up in the layouts only when it does not).
     */
    private static List<Range> ranges(Column column, EpochOrder order, int from, int records) {
        List<Range> ranges = new ArrayList<>();
        int shard = -1;
        long start = 0;
        long end = 0;
        long next = -1; // the record that extends the open range
        long shardEnd = 0; // one past the open range's shard's last record
        long recordBytes = 0;
        for (int i = from; i < from + records; i++) {
            long record = order.get(i);
            if (record == next && record < shardEnd) {
                end += recordBytes;
                next++;
                continue;
            }
            if (shard >= 0) {
                ranges.add(new Range(shard, start, end));
            }
            shard = column.shardOf(record);
            RecordLayout layout = column.shards().get(shard);
            long first = column.firstRecordOf(shard);
            recordBytes = layout.recordBytes();
            start = layout.dataOffset() + (record - first) * recordBytes;
            end = start + recordBytes;
            next = record + 1;
            shardEnd = first + layout.recordCount();
        }
        if (shard >= 0) {
            ranges.add(new Range(shard, start, end));
        }
        return List.copyOf(ranges);
    }
}
