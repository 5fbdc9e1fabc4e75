package dev.gdsloader.formats.npy;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.HostDecodedRecords;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.zip.CRC32;
import java.util.zip.CheckedInputStream;

/**
 * The records of a deflated (ZIP method 8) {@code .npy} member of an {@code .npz} archive: inflated on the host
 * with {@link java.util.zip.Inflater} (through commons-compress's {@code ZipFile}), its {@code .npy} header
 * skipped; once inflated, the member's CRC-32 is checked against the one the archive records. Offsets and sizes of the {@link dev.gdsloader.formats.RecordLayout} view are those of the inflated
 * data (see {@link HostDecodedRecords}). Immutable and thread-safe; holds no open file.
 *
 * @param file the archive
 * @param member the member's name, e.g. {@code images.npy}
 * @param headerBytes bytes of the member's {@code .npy} header (its data offset within the member)
 * @param dtype element type
 * @param shape shape of one record (copied in and out)
 * @param recordCount records (the length of axis 0)
 * @param recordBytes bytes per record
 * @param storedOffset file offset of the member's compressed data, bytes
 * @param storedBytes compressed size, bytes
 */
@SuppressWarnings("ArrayRecordComponent") // shape is copied in and out; never compared
public record InflatedNpyMember(Path file, String member, long headerBytes, DType dtype, long[] shape, long recordCount,
                                long recordBytes, long storedOffset, long storedBytes) implements HostDecodedRecords {
    /**
     * @throws IllegalArgumentException if a size is negative or the data would not fit one Java array
     */
    public InflatedNpyMember {
        shape = shape.clone();
        if (recordCount < 0 || recordBytes < 0 || headerBytes < 0 || Math.multiplyHigh(recordCount, recordBytes) != 0
                || recordCount * recordBytes > MAX_DECODED_BYTES) {
            throw new IllegalArgumentException(file + ": member '" + member + "': " + recordCount + " records of "
                    + recordBytes + " bytes do not fit one host decode buffer of at most " + MAX_DECODED_BYTES + " bytes");
        }
    }

    @Override
    public long[] recordShape() {
        return shape.clone();
    }

    /** @return the record shape (a copy); the same as {@link #recordShape()} */
    @Override
    public long[] shape() {
        return shape.clone();
    }


    @Override
    public String decodeReason() {
        return "HOST-DECODE: " + file + " member '" + member + "' is deflated; decoded on the host";
    }

    @Override
    public byte[] decode() throws IOException {
        int need = (int) (recordCount * recordBytes);
        CRC32 crc = new CRC32();
        try (NpzArchive.Open zip = NpzArchive.Open.of(file);
             InputStream in = new CheckedInputStream(zip.inflate(member), crc)) {
            in.skipNBytes(headerBytes);
            // one array of the declared size, filled in place: inflating never holds more than the header's shape
            // (readNBytes(int) would grow buffers and copy them, twice the bytes at its peak), and a stream that
            // inflates past it is stopped at its first extra byte
            byte[] data = new byte[need];
            int got = in.readNBytes(data, 0, need);
            if (got < need || in.read() >= 0) {
                throw new FormatException(file, storedOffset, "member '" + member + "' (deflated): " + need
                        + " data bytes after its " + headerBytes + "-byte .npy header", got < need
                        ? got + " bytes" : "more bytes than the header's shape and the archive's size declare");
            }
            // the whole member is inflated now: its CRC-32 must be the one the archive recorded (as numpy's
            // zipfile checks: "Bad CRC-32 for file ..."), or a damaged deflate stream would load silently
            long expected = zip.crc(member);
            if (crc.getValue() != expected) {
                throw new FormatException(file, storedOffset, "member '" + member + "' (deflated, " + storedBytes
                        + " bytes at offset " + storedOffset + "): the CRC-32 " + String.format("0x%08x", expected)
                        + " the archive records for it", "CRC-32 " + String.format("0x%08x", crc.getValue())
                        + " of the inflated bytes: the member is damaged");
            }
            return data;
        } catch (java.io.EOFException e) {
            throw new FormatException(file, storedOffset, "member '" + member + "' (deflated): a .npy header of "
                    + headerBytes + " bytes", "end of the inflated member", e);
        } catch (java.util.zip.ZipException e) {
            throw new FormatException(file, storedOffset, "member '" + member + "': deflate data", e.getMessage(), e);
        }
    }
}
