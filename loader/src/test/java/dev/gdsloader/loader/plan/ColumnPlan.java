package dev.gdsloader.loader.plan;

import java.util.ArrayList;
import java.util.List;

/**
 * Test support: an immutable copy of what one column of a batch needs ({@link ColumnPieces}): its pieces, in record
 * order, whose lengths add up to {@code bytes}.
 *
 * @param column column index in the dataset
 * @param pieces pieces in order (one per shard the batch touches)
 * @param bytes total bytes of the column view ({@code records x recordBytes})
 */
public record ColumnPlan(int column, List<Piece> pieces, long bytes) {
    /**
     * @param pieces one column's pieces, filled
     * @return an immutable copy of them
     */
    public static ColumnPlan of(ColumnPieces pieces) {
        List<Piece> copy = new ArrayList<>(pieces.count());
        for (int i = 0; i < pieces.count(); i++) {
            copy.add(new Piece(pieces.shard(i), pieces.start(i), pieces.end(i), pieces.view(i)));
        }
        return new ColumnPlan(pieces.column(), List.copyOf(copy), pieces.bytes());
    }

    /** @return bytes of staging needed to read every piece through its aligned cover */
    public long stagingBytes() {
        return pieces.stream().mapToLong(Piece::alignedLength).sum();
    }

    /** @return head padding: how far the first byte sits past its 4 KiB boundary */
    public long headPad() {
        return pieces.isEmpty() ? 0 : pieces.get(0).fileStart() - Alignment.down(pieces.get(0).fileStart());
    }
}
