package dev.gdsloader.loader.slot;

import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.plan.BatchPlan;
import dev.gdsloader.loader.plan.ColumnPlan;
import java.util.List;

/**
 * How a slot's memory is cut into per-column regions: each column gets a target region (where its view
 * lands, 4 KiB aligned, with 4 KiB of head room for the GDS path's aligned first read) and a staging
 * region (where aligned reads land before their copy, on the staged paths). Sized from the largest batch
 * of the epoch's plans.
 *
 * @param targetOffsets byte offset of each column's target region
 * @param targetBytes total target bytes
 * @param stagingOffsets byte offset of each column's staging region
 * @param stagingBytes total staging bytes
 */
public record SlotLayout(long[] targetOffsets, long targetBytes, long[] stagingOffsets, long stagingBytes) {

    /**
     * @param plans every batch plan the slots will hold
     * @param columns number of columns
     * @return a layout big enough for all of them
     */
    public static SlotLayout forPlans(List<BatchPlan> plans, int columns) {
        long[] maxView = new long[columns];
        long[] maxStaging = new long[columns];
        for (BatchPlan p : plans) {
            for (ColumnPlan c : p.columns()) {
                maxView[c.column()] = Math.max(maxView[c.column()], c.bytes());
                maxStaging[c.column()] = Math.max(maxStaging[c.column()], c.stagingBytes());
            }
        }
        long[] to = new long[columns];
        long[] so = new long[columns];
        long t = 0;
        long s = 0;
        for (int c = 0; c < columns; c++) {
            to[c] = t;
            so[c] = s;
            t += Alignment.up(maxView[c] + Alignment.BLOCK);
            s += Alignment.up(maxStaging[c]);
        }
        return new SlotLayout(to, Math.max(t, Alignment.BLOCK), so, Math.max(s, Alignment.BLOCK));
    }
}
