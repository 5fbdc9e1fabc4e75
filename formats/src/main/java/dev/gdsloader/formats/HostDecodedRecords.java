package dev.gdsloader.formats;

import java.io.IOException;

/**
 * A run of records that is not stored as-is in its file (a compressed Arrow values buffer, a deflated {@code .npz}
 * member): the bytes must be decoded on the host before they can be copied to the device.
 *
 * <p>For these layouts {@link #dataOffset()} and {@link #fileSize()} describe the <em>decoded</em> bytes, not
 * the file: record {@code i} lies at {@code dataOffset() + i * recordBytes()} of the array {@link #decode()}
 * returns, and {@code fileSize()} is that array's length. Where the encoded bytes lie in the file is given by
 * {@link #storedOffset()} and {@link #storedBytes()}.
 *
 * <p>Implementations are immutable and thread-safe and hold no open file; each {@link #decode()} opens, reads
 * and closes the file.
 */
public interface HostDecodedRecords extends RecordLayout {
    /** Largest decoded run, bytes: it is decoded into one Java array. */
    long MAX_DECODED_BYTES = Integer.MAX_VALUE - 8;

    /**
     * Says why these records take the host-decode path, for the loader's path reason.
     *
     * @return one line, e.g. {@code "HOST-DECODE: /d/a.arrow record batch 2 is LZ4_FRAME-compressed; decoded on
     *     the host"}
     */
    String decodeReason();

    /** @return 0: record 0 starts the decoded bytes */
    @Override
    default long dataOffset() {
        return 0;
    }

    /** @return bytes of the decoded records, {@code recordCount() * recordBytes()} */
    @Override
    default long fileSize() {
        return recordCount() * recordBytes();
    }

    /**
     * Returns where the encoded bytes begin in the file.
     *
     * @return byte offset from the start of the file
     */
    long storedOffset();

    /**
     * Returns how many encoded bytes the file holds for this run.
     *
     * @return bytes, {@code >= 0}
     */
    long storedBytes();

    /**
     * Reads the encoded bytes and decodes them.
     *
     * @return a new array of exactly {@code recordCount() * recordBytes()} bytes, owned by the caller, record
     *     {@code i} at {@code i * recordBytes()}
     * @throws FormatException naming the file, the offset and what was expected, when the encoded bytes do not
     *     decode, or decode to another size than the metadata declares
     * @throws IOException if the file cannot be read
     */
    byte[] decode() throws IOException;
}
