package dev.gdsloader.loader.dataset;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.RecordLayout;
import java.util.Arrays;
import java.util.List;

/**
 * One column of a dataset: a named sequence of shards whose records share a dtype and record shape,
 * and the mapping from a global record index (0-based across the column) to (shard, local record).
 *
 * <p>Immutable and thread-safe.
 */
public final class Column {
    private final String name;
    private final List<RecordLayout> shards;
    private final long[] firstRecord; // firstRecord[i] = global index of shard i's record 0; last = total
    private final DType dtype;
    private final long[] recordShape;
    private final long recordBytes;

    /**
     * @param name column name, e.g. "images"
     * @param shards shards in order; at least one
     * @throws IllegalArgumentException if the shards disagree on dtype or record shape (naming both files)
     */
    public Column(String name, List<RecordLayout> shards) {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("column '" + name + "' has no shards");
        }
        this.name = name;
        this.shards = List.copyOf(shards);
        RecordLayout first = shards.get(0);
        this.dtype = first.dtype();
        this.recordShape = first.recordShape().clone();
        this.recordBytes = first.recordBytes();
        if (recordBytes == 0 && first.recordCount() > 0) {
            throw new IllegalArgumentException("column '" + name + "': " + first.file() + " holds records of 0 bytes (shape "
                    + java.util.Arrays.toString(first.recordShape()) + "), which cannot be loaded");
        }
        this.firstRecord = new long[shards.size() + 1];
        for (int i = 0; i < shards.size(); i++) {
            RecordLayout s = shards.get(i);
            if (s.dtype() != dtype || !Arrays.equals(s.recordShape(), recordShape)) {
                throw new IllegalArgumentException("column '" + name + "': shard " + s.file() + " has records "
                        + s.dtype() + Arrays.toString(s.recordShape()) + " but " + first.file() + " has "
                        + dtype + Arrays.toString(recordShape));
            }
            firstRecord[i + 1] = Math.addExact(firstRecord[i], s.recordCount());
        }
    }

    /** @return the column name */
    public String name() {
        return name;
    }

    /** @return the shards, in order */
    public List<RecordLayout> shards() {
        return shards;
    }

    /** @return element type of every record */
    public DType dtype() {
        return dtype;
    }

    /** @return shape of one record (a copy), e.g. {@code [28, 28]}; empty for scalars */
    public long[] recordShape() {
        return recordShape.clone();
    }

    /** @return bytes of one record */
    public long recordBytes() {
        return recordBytes;
    }

    /** @return total records over all shards */
    public long recordCount() {
        return firstRecord[shards.size()];
    }

    /** @return total data bytes over all shards (records only, no headers) */
    public long dataBytes() {
        return recordCount() * recordBytes;
    }

    /**
     * @param globalRecord record index in {@code [0, recordCount())}
     * @return index of the shard that holds it
     * @throws IndexOutOfBoundsException if out of range
     */
    public int shardOf(long globalRecord) {
        if (globalRecord < 0 || globalRecord >= recordCount()) {
            throw new IndexOutOfBoundsException("record " + globalRecord + " outside column '" + name + "' of "
                    + recordCount() + " records");
        }
        int i = Arrays.binarySearch(firstRecord, globalRecord);
        if (i >= 0) {
            while (i + 1 < firstRecord.length && firstRecord[i + 1] == globalRecord) {
                i++; // skip empty shards
            }
            return i;
        }
        return -i - 2;
    }

    /**
     * @param shard shard index
     * @return global index of the shard's first record
     */
    public long firstRecordOf(int shard) {
        return firstRecord[shard];
    }
}
