package dev.gdsloader.formats.registry;

import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.arrow.CompressedArrowRecords;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Locale;

/** The lines the inspectors share: a run's records and where its bytes lie. Stateless. */
final class Inspection {
    private Inspection() {
    }

    /** Where a run's bytes lie: a file extent, or the stored bytes that are decoded on the host. */
    static String extent(RecordLayout l) {
        if (l instanceof HostDecodedRecords d) {
            return "decoded on the host from bytes " + d.storedOffset() + ".." + (d.storedOffset() + d.storedBytes())
                    + (d instanceof CompressedArrowRecords c ? " (" + c.codec() + ")" : " (deflate)");
        }
        return "at bytes " + l.dataOffset() + ".." + (l.dataOffset() + l.recordCount() * l.recordBytes());
    }

    /** A one-run shard: its records, and its data's extent and 4 KiB alignment. */
    static void describe(RecordLayout l, PrintStream out) {
        long end = l.dataOffset() + l.recordCount() * l.recordBytes();
        out.printf(Locale.ROOT, "  records       %d of %s%s, %d bytes each%n", l.recordCount(), l.dtype(),
                Arrays.toString(l.recordShape()), l.recordBytes());
        out.printf(Locale.ROOT, "  data          bytes %d..%d of %d (data offset %s 4 KiB aligned%s)%n", l.dataOffset(), end,
                l.fileSize(), l.dataOffset() % 4096 == 0 ? "is" : "is not",
                l.recordBytes() % 4096 == 0 && l.dataOffset() % 4096 == 0 ? ", every record on a block boundary" : "");
    }

    /** Records in {@code data} of records of {@code recordShape} x {@code dtype}; 0 for records of no bytes. */
    static long records(dev.gdsloader.formats.DType dtype, long[] recordShape, byte[] data) {
        long recordBytes = dtype.itemSize();
        for (long d : recordShape) {
            recordBytes = Math.multiplyExact(recordBytes, d);
        }
        if (recordBytes != 0 && data.length % recordBytes != 0) {
            throw new IllegalArgumentException(data.length + " bytes are not a whole number of " + recordBytes
                    + "-byte records");
        }
        return recordBytes == 0 ? 0 : data.length / recordBytes;
    }

    /** {@code [records, recordShape...]}. */
    static long[] withRecords(long records, long[] recordShape) {
        long[] shape = new long[recordShape.length + 1];
        shape[0] = records;
        System.arraycopy(recordShape, 0, shape, 1, recordShape.length);
        return shape;
    }
}
