package dev.gdsloader.loader.plan;

/**
 * Test support: a contiguous byte range of one shard that a batch needs: records {@code [firstRecord, firstRecord +
 * records)} of shard {@code shard}, stored at file bytes {@code [fileStart, fileEnd)}, landing at
 * {@code viewOffset} bytes from the start of the batch's column view.
 *
 * @param shard index of the shard in its column
 * @param fileStart first byte in the file
 * @param fileEnd one past the last byte
 * @param viewOffset where the first byte lands, relative to the column view start
 */
public record Piece(int shard, long fileStart, long fileEnd, long viewOffset) {
    /** @return length in bytes */
    public long length() {
        return fileEnd - fileStart;
    }

    /** @return the 4 KiB-aligned range covering this piece: {@code up(fileEnd) - down(fileStart)} bytes */
    public long alignedLength() {
        return Alignment.up(fileEnd) - Alignment.down(fileStart);
    }
}
