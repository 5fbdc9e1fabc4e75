package dev.gdsloader.loader.arrow;

import dev.gdsloader.formats.arrow.ArrowBatchLayout;
import dev.gdsloader.loader.PathTaken;
import java.util.List;

/**
 * One record batch delivered by an {@link ArrowBatchReader}: its columns' buffers in device (or host) memory.
 *
 * <p>Ownership: the memory belongs to the reader, which reuses it for the next batch. A batch is valid until the
 * reader's next {@link ArrowBatchReader#next()} or {@link ArrowBatchReader#close()}; after that
 * {@link #columns()} throws, and addresses taken from it earlier must no longer be used. Not thread-safe (read it on
 * the reader's thread, or hand it over with a happens-before edge and keep the reader still).
 */
public final class ArrowBatch {
    private final ArrowBatchReader reader;
    private final ArrowBatchLayout layout;
    private final List<ArrowDeviceColumn> columns;
    private final PathTaken path;
    private final String pathReason;
    private boolean valid = true;

    ArrowBatch(ArrowBatchReader reader, ArrowBatchLayout layout, List<ArrowDeviceColumn> columns, PathTaken path,
               String pathReason) {
        this.reader = reader;
        this.layout = layout;
        this.columns = List.copyOf(columns);
        this.path = path;
        this.pathReason = pathReason;
    }

    /** @return the record batch index in the file */
    public int index() {
        return layout.batch();
    }

    /** @return rows in this batch */
    public long rows() {
        return layout.rows();
    }

    /** @return the batch's layout in the file (body extent, stored buffer extents) */
    public ArrowBatchLayout layout() {
        return layout;
    }

    /** @return how the bytes travelled: GDS, CUFILE_COMPAT, BOUNCE or HOST */
    public PathTaken path() {
        return path;
    }

    /** @return why: the reader's path reason, and for a compressed body that it was decoded on the host ("HOST-DECODE") */
    public String pathReason() {
        return pathReason;
    }

    /** @return whether this batch's memory still holds it (no later batch read, reader open) */
    public boolean valid() {
        return valid && !reader.isClosed();
    }

    /**
     * @return the columns, in the reader's column order
     * @throws IllegalStateException if the reader has read another batch or is closed
     */
    public List<ArrowDeviceColumn> columns() {
        checkValid();
        return columns;
    }

    /**
     * @param name a column name
     * @return that column
     * @throws IllegalArgumentException if the reader reads no such column
     * @throws IllegalStateException if the batch is no longer valid
     */
    public ArrowDeviceColumn column(String name) {
        return columns().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow(() ->
                new IllegalArgumentException("no column '" + name + "' in record batch " + index() + "; columns are "
                        + columns.stream().map(ArrowDeviceColumn::name).toList()));
    }

    void invalidate() {
        valid = false;
    }

    void checkValid() {
        if (!valid()) {
            throw new IllegalStateException(layout.file() + ": record batch " + index() + " is no longer in memory: the "
                    + "reader has read the next batch or was closed");
        }
    }
}
