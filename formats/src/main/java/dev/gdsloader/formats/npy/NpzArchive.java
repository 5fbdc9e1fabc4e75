package dev.gdsloader.formats.npy;

import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Records;
import dev.gdsloader.formats.Shapes;
import dev.gdsloader.formats.ShardFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import org.apache.commons.compress.archivers.zip.ZipArchiveEntry;
import org.apache.commons.compress.archivers.zip.ZipFile;

/**
 * An {@code .npz} archive ({@code numpy.savez} / {@code numpy.savez_compressed}): a ZIP file whose members are
 * {@code .npy} files; member {@code x.npy} becomes column {@code x}, its rows along axis 0 the records.
 *
 * <p>The central directory (zip64 included) is read with commons-compress's {@link ZipFile}, which also gives
 * each member's data offset: the local file header's offset plus its 30 fixed bytes, file name and extra field
 * (PKWARE APPNOTE.TXT, section 4.3.7 "Local file header"). A member <em>stored</em> (method 0) is read in place:
 * its records lie at {@code data offset + .npy header length} of the archive, an ordinary {@link Records}. A
 * member <em>deflated</em> (method 8) gives an {@link InflatedNpyMember}, decoded on the host. Other methods and
 * encrypted members are refused by name.
 *
 * <p>Immutable and thread-safe; holds no open file.
 */
public final class NpzArchive {
    /**
     * One {@code .npy} member.
     *
     * @param name the member's name in the archive, e.g. {@code images.npy}
     * @param column the column it gives, e.g. {@code images}
     * @param method ZIP compression method: 0 stored, 8 deflated
     * @param dataOffset file offset of the member's (stored or compressed) bytes
     * @param storedBytes bytes the archive holds for the member
     * @param size the member's uncompressed size (its {@code .npy} header and data), bytes
     * @param header the member's {@code .npy} header
     * @param records its records: a {@link Records} in the archive (stored) or an {@link InflatedNpyMember}
     */
    public record Member(String name, String column, int method, long dataOffset, long storedBytes, long size,
                         NpyHeader header, RecordLayout records) {
    }

    /**
     * Most bytes one stored byte of a deflate stream can inflate to: a block of length-258 matches at one bit each
     * is 1032:1 (RFC 1951; zlib's technical details give the same bound). A member declaring more than this many
     * times its stored size is refused before anything is inflated.
     */
    static final long MAX_DEFLATE_RATIO = 1032;

    private final Path file;
    private final List<Member> members;

    private NpzArchive(Path file, List<Member> members) {
        this.file = file;
        this.members = List.copyOf(members);
    }

    /**
     * Reads the archive's central directory and every member's {@code .npy} header (inflating only the header of a
     * deflated member).
     *
     * @param file an {@code .npz} file
     * @return its members
     * @throws FormatException naming the archive, the member and the offset: not a ZIP archive (truncated, no
     *     central directory), two members of one name (both offsets named), a member not named {@code *.npy}, a
     *     deflated member declaring more than {@value #MAX_DEFLATE_RATIO} times its stored size, an unsupported
     *     method or encryption, a bad
     *     {@code .npy} header, or a header whose shape and dtype need another size than the member has
     * @throws IOException if the file cannot be read
     */
    public static NpzArchive open(Path file) throws IOException {
        List<Member> members = new ArrayList<>();
        Map<String, Long> seen = new HashMap<>();
        try (Open zip = Open.of(file); FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            for (ZipArchiveEntry e : Collections.list(zip.zip.getEntriesInPhysicalOrder())) {
                Long first = seen.putIfAbsent(e.getName(), e.getLocalHeaderOffset());
                if (first != null) {
                    // numpy reads the last of them (zipfile keeps one entry per name), ZipFile.getEntry the first:
                    // which one is meant cannot be known, so neither is read
                    throw new FormatException(file, e.getLocalHeaderOffset(), "member names that occur once each",
                            "member '" + e.getName() + "' twice: local headers at offsets " + first + " and "
                                    + e.getLocalHeaderOffset());
                }
                members.add(member(zip, ch, e));
            }
        }
        if (members.isEmpty()) {
            throw new FormatException(file, 0, "an .npz archive with at least one .npy member", "an empty archive");
        }
        return new NpzArchive(file, members);
    }

    private static Member member(Open zip, FileChannel ch, ZipArchiveEntry e) throws IOException {
        Path file = zip.file;
        String name = e.getName();
        long at = e.getLocalHeaderOffset();
        if (!name.endsWith(".npy") || e.isDirectory()) {
            throw new FormatException(file, at, "members named <column>.npy", "member '" + name + "'");
        }
        if (e.getGeneralPurposeBit().usesEncryption()) {
            throw new FormatException(file, at, "member '" + name + "' is encrypted, which is not supported");
        }
        long size = e.getSize();
        if (size < 0) {
            throw new FormatException(file, at, "member '" + name + "': an uncompressed size in the central directory", "none");
        }
        String column = name.substring(0, name.length() - ".npy".length());
        if (e.getMethod() == ZipEntry.STORED) {
            long data = zip.dataOffset(e);
            if (e.getCompressedSize() != size || data > ch.size() - size) {
                throw new FormatException(file, data, "member '" + name + "' (stored): " + size + " bytes inside the archive of "
                        + ch.size() + " bytes", e.getCompressedSize() + " stored bytes");
            }
            NpyHeader h = header(file, name, data, () -> NpyHeader.read(new NpyHeader.ChannelRange(ch, data, size), file));
            long[] recordShape = recordShape(file, name, data, h, size);
            return new Member(name, column, 0, data, size, size, h, new Records(file, h.dtype(), recordShape, h.shape()[0],
                    Shapes.byteSize(recordShape, h.dtype().itemSize(), file, data), data + h.dataOffset(), ch.size()));
        }
        if (e.getMethod() == ZipEntry.DEFLATED) {
            long data = zip.dataOffset(e);
            long stored = e.getCompressedSize();
            if (stored < 0 || size > Math.max(1, stored) * MAX_DEFLATE_RATIO) {
                throw new FormatException(file, data, "member '" + name + "' (deflated): at most " + MAX_DEFLATE_RATIO
                        + " inflated bytes per stored byte (deflate's limit)", "a declared size of " + size + " bytes from "
                        + stored + " stored bytes");
            }
            NpyHeader h;
            try (InputStream in = zip.inflate(name)) {
                h = header(file, name, data, () -> NpyHeader.read(new InflatedPrefix(in, size), file));
            }
            long[] recordShape = recordShape(file, name, data, h, size);
            return new Member(name, column, 8, data, e.getCompressedSize(), size, h, new InflatedNpyMember(file, name,
                    h.dataOffset(), h.dtype(), recordShape, h.shape()[0], Shapes.byteSize(recordShape, h.dtype().itemSize(),
                    file, data), data, e.getCompressedSize()));
        }
        throw new FormatException(file, at, "member '" + name + "': ZIP method 0 (stored) or 8 (deflated)", "method "
                + e.getMethod());
    }

    /** Reads a member's header. */
    @FunctionalInterface
    private interface HeaderRead {
        NpyHeader read() throws IOException;
    }

    /** Runs a header read, reporting its errors at the member's data offset plus the offset within the member. */
    private static NpyHeader header(Path file, String name, long data, HeaderRead read) throws IOException {
        try {
            return read.read();
        } catch (FormatException x) {
            throw new FormatException(file, data + x.offset(), "member '" + name + "' (data at byte " + data + ", "
                    + x.offset() + " bytes in): " + x.detail(), x);
        } catch (java.util.zip.ZipException x) {
            throw new FormatException(file, data, "member '" + name + "': deflate data", x.getMessage(), x);
        }
    }

    /** The record shape, once the member's size is checked against the header's shape and dtype. */
    private static long[] recordShape(Path file, String name, long data, NpyHeader h, long size) throws FormatException {
        long[] recordShape;
        try {
            recordShape = NpyShard.recordShape(file, h);
        } catch (FormatException x) {
            throw new FormatException(file, data + x.offset(), "member '" + name + "': " + x.detail(), x);
        }
        long expected = h.dataOffset() + h.dataBytes();
        if (expected < 0 || expected != size) {
            throw new FormatException(file, data + h.dataOffset(), "member '" + name + "': "
                    + (expected < 0 ? "more than " + Long.MAX_VALUE : expected) + " bytes (header " + h.dataOffset() + " + "
                    + Shapes.toProduct(h.shape(), h.dtype().itemSize()) + ")", "a member of " + size + " bytes");
        }
        return recordShape;
    }

    /** @return the archive */
    public Path file() {
        return file;
    }

    /** @return the members, in the order they lie in the archive */
    public List<Member> members() {
        return members;
    }

    /** @return the column names (member names without {@code .npy}), in archive order */
    public List<String> columns() {
        return members.stream().map(Member::column).toList();
    }

    /**
     * @param column a column name
     * @return its records
     * @throws IllegalArgumentException naming the columns that exist, if there is none of that name
     */
    public RecordLayout records(String column) {
        return members.stream().filter(m -> m.column().equals(column)).findFirst().map(Member::records).orElseThrow(() ->
                new IllegalArgumentException(file + ": no member '" + column + ".npy'; columns are " + columns()));
    }

    /** An open archive: commons-compress's {@link ZipFile}, with its errors turned into {@link FormatException}s. */
    static final class Open implements AutoCloseable {
        final Path file;
        final ZipFile zip;

        private Open(Path file, ZipFile zip) {
            this.file = file;
            this.zip = zip;
        }

        /**
         * @param file an archive
         * @return it, open; the caller closes it
         * @throws FormatException if it is not a ZIP archive (offset: the end of the file, where the end of central
         *     directory record is looked for)
         */
        static Open of(Path file) throws IOException {
            ShardFiles.requireRegularFile(file);
            try {
                return new Open(file, ZipFile.builder().setPath(file).get());
            } catch (java.nio.file.FileSystemException e) {
                throw e; // no such file, access denied: not a format problem
            } catch (IOException | RuntimeException e) {
                // commons-compress says "Archive is not a ZIP archive" or "Error reading Zip content from <file>":
                // say instead where the archive's structure was looked for and what was there
                throw notZip(file, e);
            }
        }

        /** Bytes searched for the end-of-central-directory record: its 22 bytes and a comment of up to 65535. */
        private static final int EOCD_SEARCH = 22 + 0xFFFF;

        /** The error for an archive whose central directory could not be read, at the offset where it went wrong. */
        private static FormatException notZip(Path file, Exception e) throws IOException {
            String expected = "a ZIP archive of .npy members (.npz): ";
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                long size = ch.size();
                int n = (int) Math.min(size, EOCD_SEARCH);
                ByteBuffer tail = ByteBuffer.allocate(n).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                while (tail.hasRemaining() && ch.read(tail, size - n + tail.position()) >= 0) {
                    // read the tail fully
                }
                for (int i = n - 22; i >= 0; i--) {
                    if (tail.getInt(i) == 0x06054b50) {
                        long eocd = size - n + i;
                        long cdBytes = Integer.toUnsignedLong(tail.getInt(i + 12));
                        long cdOffset = Integer.toUnsignedLong(tail.getInt(i + 16));
                        return new FormatException(file, cdOffset == 0xFFFFFFFFL ? eocd : cdOffset, expected
                                + "a central directory of " + cdBytes + " bytes at offset " + cdOffset + " (as the"
                                + " end-of-central-directory record at offset " + eocd + " says)", "one that does not"
                                + " parse" + (e.getCause() instanceof java.io.EOFException
                                        || e instanceof java.io.EOFException ? " (it runs past its end)" : ""), e);
                    }
                }
                return new FormatException(file, size, expected + "an end-of-central-directory"
                        + " record (PK\\x05\\x06) in its last " + n + " bytes", "none in a file of " + size
                        + " bytes: not a ZIP archive, or cut short", e);
            }
        }

        /** @return the file offset of a member's data (its local file header read by commons-compress) */
        long dataOffset(ZipArchiveEntry e) throws IOException {
            if (e.getDataOffset() < 0) {
                // opening the raw stream reads the local file header and sets the data offset
                InputStream raw = zip.getRawInputStream(e);
                if (raw != null) {
                    raw.close();
                }
            }
            return e.getDataOffset();
        }

        /** @return the member's uncompressed bytes as a stream; the caller closes it */
        InputStream inflate(String member) throws IOException {
            ZipArchiveEntry e = zip.getEntry(member);
            if (e == null) {
                throw new FormatException(file, 0, "a member '" + member + "'", "none (the archive changed?)");
            }
            return zip.getInputStream(e);
        }

        /** @return the member's CRC-32 as the central directory records it */
        long crc(String member) throws IOException {
            ZipArchiveEntry e = zip.getEntry(member);
            if (e == null || e.getCrc() < 0) {
                throw new FormatException(file, 0, "a member '" + member + "' with a CRC-32", "none (the archive changed?)");
            }
            return e.getCrc();
        }

        @Override
        public void close() throws IOException {
            zip.close();
        }
    }
}
