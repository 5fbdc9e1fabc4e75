package dev.gdsloader.loader.spi;

import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.plan.Alignment;
import java.util.List;
import java.util.function.IntUnaryOperator;

/**
 * How a slot's memory is cut into per-column regions: each column gets a target region (where its view
 * lands, 4 KiB aligned, with 4 KiB of head room for the GDS path's aligned first read) and a staging region
 * (where the aligned covers of its pieces land before their copy, on the staged paths). Each piece's cover
 * exceeds the piece by less than 8 KiB, so staging is sized {@code batch bytes + 8 KiB x max pieces}.
 *
 * @param targetOffsets byte offset of each column's target region
 * @param targetBytes total target bytes
 * @param stagingOffsets byte offset of each column's staging region
 * @param stagingBytes total staging bytes
 */
@SuppressWarnings("ArrayRecordComponent") // a slot's offsets, built once, never compared
public record SlotLayout(long[] targetOffsets, long targetBytes, long[] stagingOffsets, long stagingBytes) {

    /**
     * @param columns the dataset's columns
     * @param batchSize records per batch
     * @param maxPieces for column {@code c}, the most pieces one batch of it can need
     * @return a layout big enough for any batch
     */
    public static SlotLayout forBatch(List<Column> columns, int batchSize, IntUnaryOperator maxPieces) {
        long[] to = new long[columns.size()];
        long[] so = new long[columns.size()];
        long t = 0;
        long s = 0;
        for (int c = 0; c < columns.size(); c++) {
            long view = Math.multiplyExact(columns.get(c).recordBytes(), (long) batchSize);
            to[c] = t;
            so[c] = s;
            t += Alignment.up(view + Alignment.BLOCK);
            s += Alignment.up(view + 2 * Alignment.BLOCK * maxPieces.applyAsInt(c));
        }
        return new SlotLayout(to, Math.max(t, Alignment.BLOCK), so, Math.max(s, Alignment.BLOCK));
    }

    /**
     * @param c column index
     * @return bytes of column {@code c}'s target region
     */
    public long targetRegion(int c) {
        return (c + 1 < targetOffsets.length ? targetOffsets[c + 1] : targetBytes) - targetOffsets[c];
    }

    /**
     * @param c column index
     * @return bytes of column {@code c}'s staging region
     */
    public long stagingRegion(int c) {
        return (c + 1 < stagingOffsets.length ? stagingOffsets[c + 1] : stagingBytes) - stagingOffsets[c];
    }
}
