package dev.gdsloader.formats.arrow;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Records;
import dev.gdsloader.formats.ShardFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.BodyCompression;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An Arrow IPC file ({@code .arrow}, Feather v2; Arrow columnar format, "IPC File Format"): its schema and,
 * for every record batch, the byte ranges of each column's buffers, read from the footer and the record-batch
 * metadata with Arrow Java's flatbuffer classes ({@code org.apache.arrow.flatbuf}) — no buffer data is read.
 *
 * <p>One record batch is the natural read unit. {@link #records(String, int)} gives the values of one
 * fixed-width column of one batch as a {@link RecordLayout}: primitive integers and floats, {@code
 * FixedSizeBinary(w)} (w bytes per record) and {@code FixedSizeList<primitive>(n)} (a tensor per row, e.g. a
 * 784-byte image). Columns with nulls, variable-length, bit-packed bool, and dictionary-encoded columns are refused
 * by name, column and batch. Compressed bodies (LZ4_FRAME, ZSTD) give {@link CompressedArrowRecords}, decoded on
 * the host with Arrow Java's codecs. {@link #batchLayout(int)} gives a whole record batch instead, as {@code gdsloader
 * inspect} prints it: body extent and every column's validity, offsets and values buffers, nulls, Bool and
 * variable-length columns included ({@link ArrowBatchLayout}). The IPC stream format (it starts with {@code FF FF FF FF}) is
 * detected at offset 0 and read by scanning its messages. Immutable and thread-safe; holds no open file.
 */
public final class ArrowIpcFile {
    /** Largest footer or record-batch metadata accepted, bytes: metadata is small; a larger value is damage. */
    static final int MAX_METADATA_BYTES = 64 << 20;

    /** The file format's magic, at both ends of the file. */
    private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

    /**
     * Smallest Arrow IPC file, bytes: magic 6 + padding 2 + a footer flatbuffer of at least 4 bytes (its root
     * table offset) + footer length 4 + magic 6. A shorter file cannot hold the structure its magic promises.
     */
    static final int MIN_FILE_BYTES = MAGIC.length + 2 + 4 + 4 + MAGIC.length;

    /** What an IPC stream needs at offset 0, for the message about a stream too short to hold it. */
    private static final String STREAM_START = "an Arrow IPC stream needs a continuation marker 0xFFFFFFFF and a 4-byte "
            + "metadata length at offset 0";

    /** Per record batch: where its body starts, its rows, and its field nodes and buffers. */
    @SuppressWarnings("ArrayRecordComponent") // a private parse result, never compared or shared
    private record BatchInfo(long messageOffset, long bodyOffset, long bodyLength, long rows, long[] nodeLength, long[] nullCount,
                             long[] bufferOffset, long[] bufferLength, CompressionUtil.CodecType codec) {
        boolean compressed() {
            return codec != CompressionUtil.CodecType.NO_COMPRESSION;
        }
    }

    private final Path file;
    private final long fileSize;
    private final Schema schema;
    private final List<BatchInfo> batches;
    /** Each column's place among a batch's nodes and buffers, and its lookup by name: made once, O(columns). */
    private final ArrowFieldIndex index;
    private final List<String> columns;

    private ArrowIpcFile(Path file, long fileSize, Schema schema, List<BatchInfo> batches) {
        this.file = file;
        this.fileSize = fileSize;
        this.schema = schema;
        this.batches = batches;
        this.index = new ArrowFieldIndex(schema);
        this.columns = schema.getFields().stream().map(Field::getName).toList();
    }

    /**
     * Reads the footer and the metadata of every record batch.
     *
     * @param file an Arrow IPC file
     * @return the file's structure
     * @throws FormatException naming file and offset: a bad magic, a footer or message that does not fit the file
     *     or does not parse, a schema without fields or with invalid type parameters, a record batch past the end of
     *     the file or inconsistent with the schema or itself (field nodes longer than the batch, buffers too short for
     *     an uncompressed column's rows), a stream without its end-of-stream marker
     * @throws IOException if the file cannot be read
     */
    public static ArrowIpcFile open(Path file) throws IOException {
        ShardFiles.requireRegularFile(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            byte[] head = read(ch, file, 0, (int) Math.min(8, size));
            if (head.length >= 4 && head[0] == (byte) 0xFF && head[1] == (byte) 0xFF && head[2] == (byte) 0xFF
                    && head[3] == (byte) 0xFF) {
                return openStream(ch, file, size);
            }
            if (size < 4 && allFF(head)) {
                // the start of a stream, or (empty) too short to tell: say what a stream needs
                throw new FormatException(file, 0, "the file of " + bytes(size) + " is too short for an Arrow IPC stream: "
                        + STREAM_START + (size == 0 ? " (an Arrow IPC file needs at least " + MIN_FILE_BYTES
                        + " bytes, starting with the magic 'ARROW1')" : ""));
            }
            int prefix = (int) Math.min(MAGIC.length, size);
            if (!Arrays.equals(Arrays.copyOf(head, prefix), Arrays.copyOf(MAGIC, prefix))) {
                throw new FormatException(file, 0, "the Arrow file magic 'ARROW1'", quote(head));
            }
            if (size < MIN_FILE_BYTES) {
                throw new FormatException(file, 0, "the file of " + bytes(size) + " is too short for an Arrow IPC file: it "
                        + "needs at least " + MIN_FILE_BYTES + " (magic 6 + padding 2 + footer + footer length 4 + magic 6)");
            }
            ByteBuffer tail = ByteBuffer.wrap(read(ch, file, size - 10, 10)).order(ByteOrder.LITTLE_ENDIAN);
            int footerLength = tail.getInt();
            byte[] endMagic = new byte[6];
            tail.get(endMagic);
            if (!Arrays.equals(endMagic, MAGIC)) {
                throw new FormatException(file, size - 6, "the Arrow file magic 'ARROW1' at the end", quote(endMagic));
            }
            long footerStart = size - 10 - footerLength;
            if (footerLength < 4 || footerStart < 8 || footerLength > MAX_METADATA_BYTES) {
                throw new FormatException(file, size - 10, "a footer length within the file of " + size + " bytes",
                        String.valueOf(footerLength));
            }
            Footer footer;
            org.apache.arrow.flatbuf.Schema fbSchema;
            try {
                footer = Footer.getRootAsFooter(ByteBuffer.wrap(read(ch, file, footerStart, footerLength)).order(ByteOrder.LITTLE_ENDIAN));
                fbSchema = footer.schema();
            } catch (RuntimeException e) {
                throw unparsable(file, footerStart, "an Arrow footer (flatbuffer)", e);
            }
            if (fbSchema == null) {
                throw new FormatException(file, footerStart, "an Arrow footer with a schema", "a footer without one");
            }
            Schema schema = schema(file, footerStart, fbSchema);
            List<BatchInfo> batches = new ArrayList<>();
            List<long[]> blocks = new ArrayList<>();
            try {
                // flatbuffer accessors check bounds lazily: a damaged footer fails here, not at getRoot
                int n = footer.recordBatchesLength();
                if (n < 0 || (long) n * 24 > footerLength) {
                    throw new FormatException(file, footerStart, "at most " + footerLength / 24 + " record batches", n + "");
                }
                for (int i = 0; i < n; i++) {
                    Block b = footer.recordBatches(new Block(), i);
                    blocks.add(new long[] {b.offset(), b.metaDataLength(), b.bodyLength()});
                }
            } catch (RuntimeException e) {
                throw unparsable(file, footerStart, "an Arrow footer (flatbuffer)", e);
            }
            for (long[] b : blocks) {
                batches.add(checked(file, schema, batch(ch, file, footerStart, b[0], (int) b[1], b[2], true)));
            }
            return new ArrowIpcFile(file, size, schema, List.copyOf(batches));
        }
    }

    /**
     * Reads the IPC stream format by scanning its messages: a Schema message, then record batches, until the
     * end-of-stream marker, which must be there (a stream without it is refused as truncated). Dictionary batches are
     * refused (dictionary columns are not supported on the device path).
     */
    private static ArrowIpcFile openStream(FileChannel ch, Path file, long size) throws IOException {
        Schema schema = null;
        List<BatchInfo> batches = new ArrayList<>();
        if (size < 8) {
            throw new FormatException(file, 0, "the file of " + bytes(size) + " is too short for an Arrow IPC stream: "
                    + STREAM_START);
        }
        long pos = 0;
        // Ends at the end-of-stream marker (FF FF FF FF 00 00 00 00), which must be there. Arrow Java's
        // ArrowStreamReader also ends quietly, without one, when the file ends right after a whole message
        // (MessageSerializer.readMessage in arrow-vector 19.0.0); we are stricter on purpose: a stream cut exactly at a
        // message boundary would otherwise lose its last record batches silently, and this loader promises that
        // nothing is truncated silently. pyarrow's and Arrow Java's writers always write the marker on close, so a
        // stream without it is one whose writer did not finish. A partial message header is refused too.
        boolean ended = false;
        while (pos < size) {
            if (size - pos < 8) {
                throw new FormatException(file, pos, "a message header or the end-of-stream marker (8 bytes: continuation "
                        + "marker 0xFFFFFFFF and a 4-byte metadata length)", bytes(size - pos) + " left at the end of the file");
            }
            ByteBuffer prefix = ByteBuffer.wrap(read(ch, file, pos, 8)).order(ByteOrder.LITTLE_ENDIAN);
            int marker = prefix.getInt();
            int length = prefix.getInt();
            if (marker != -1) {
                throw new FormatException(file, pos, "a message continuation marker FF FF FF FF", Integer.toHexString(marker));
            }
            if (length == 0) {
                ended = true; // end-of-stream marker
                break;
            }
            if (length < 0 || length > MAX_METADATA_BYTES || pos + 8 + length > size) {
                throw new FormatException(file, pos + 4, "message metadata that fits the file of " + size + " bytes", length + " bytes");
            }
            byte[] meta = read(ch, file, pos + 8, length);
            long bodyLength;
            byte type;
            Message m;
            try {
                m = Message.getRootAsMessage(ByteBuffer.wrap(meta).order(ByteOrder.LITTLE_ENDIAN));
                bodyLength = m.bodyLength();
                type = m.headerType();
            } catch (RuntimeException e) {
                throw unparsable(file, pos + 8, "an Arrow message (flatbuffer)", e);
            }
            long bodyOffset = pos + 8 + length;
            if (bodyLength < 0 || bodyOffset > size - bodyLength) {
                throw new FormatException(file, pos, "a message body inside the file of " + size + " bytes", bodyLength + " bytes");
            }
            if (type == MessageHeader.Schema) {
                if (schema != null) {
                    throw new FormatException(file, pos, "one Schema message, at the start of the stream", "a second one");
                }
                org.apache.arrow.flatbuf.Schema fbSchema;
                try {
                    fbSchema = (org.apache.arrow.flatbuf.Schema) m.header(new org.apache.arrow.flatbuf.Schema());
                } catch (RuntimeException e) {
                    throw unparsable(file, pos + 8, "an Arrow schema (flatbuffer)", e);
                }
                if (fbSchema == null) {
                    throw new FormatException(file, pos + 8, "a Schema message with a schema", "a message without one");
                }
                schema = schema(file, pos + 8, fbSchema);
            } else if (type == MessageHeader.RecordBatch) {
                if (schema == null) {
                    throw new FormatException(file, pos, "a Schema message before the first record batch", "a record batch");
                }
                batches.add(checked(file, schema, batch(ch, file, size, pos, 8 + length, bodyLength, false)));
            } else if (type == MessageHeader.DictionaryBatch) {
                throw new FormatException(file, pos, "no dictionary batches: dictionary-encoded columns are not supported on "
                        + "the device path");
            } else {
                throw new FormatException(file, pos + 8, "a Schema, RecordBatch or DictionaryBatch message", "message type "
                        + type);
            }
            pos = bodyOffset + bodyLength;
        }
        if (schema == null) {
            throw new FormatException(file, 0, "an Arrow IPC stream starting with a Schema message", "none");
        }
        if (!ended) {
            throw new FormatException(file, pos, "the end-of-stream marker (continuation 0xFFFFFFFF and a 0x00000000 "
                    + "length)", "the end of the file after " + (batches.isEmpty() ? "the schema and no record batches"
                    : batches.size() + (batches.size() == 1 ? " record batch" : " record batches"))
                    + " (truncated? the writer did not finish)");
        }
        return new ArrowIpcFile(file, size, schema, List.copyOf(batches));
    }

    /**
     * Reads one record batch's metadata. {@code end}: the byte its message and body must end at or before (the footer's
     * start in the file format, so that a body cut short is never read into the footer; the file's size in a stream).
     * {@code fromFooter}: {@code bodyLength} is the footer's {@code Block.bodyLength}, which the message's own
     * {@code bodyLength} must equal (pyarrow refuses a mismatch: "Mismatching body length for IPC message").
     */
    private static BatchInfo batch(FileChannel ch, Path file, long end, long offset, int metaLength, long bodyLength,
                                   boolean fromFooter) throws IOException {
        long bodyOffset = offset + metaLength;
        if (metaLength > MAX_METADATA_BYTES) {
            throw new FormatException(file, offset, "record batch metadata of at most " + MAX_METADATA_BYTES + " bytes",
                    metaLength + " bytes");
        }
        if (offset < 8 || metaLength < 8 || offset > end || bodyOffset > end || bodyLength < 0 || bodyOffset > end - bodyLength) {
            throw new FormatException(file, offset, fromFooter
                    ? "a record batch that ends before the footer at byte " + end
                    : "a record batch inside the file of " + end + " bytes",
                    "metadata of " + metaLength + " bytes and a body of " + bodyLength + " bytes at " + offset
                    + (fromFooter && bodyOffset <= end ? ", ending at byte " + (bodyOffset + bodyLength)
                    + " (the body was cut short, or the footer's block is damaged)" : ""));
        }
        ByteBuffer meta = ByteBuffer.wrap(read(ch, file, offset, metaLength)).order(ByteOrder.LITTLE_ENDIAN);
        int first = meta.getInt();
        int length = first == -1 ? meta.getInt() : first; // continuation marker (format 1.0) or legacy length
        if (length <= 0 || length > meta.remaining()) {
            throw new FormatException(file, offset, "a message of at most " + meta.remaining() + " bytes", length + " bytes");
        }
        RecordBatch rb;
        try {
            Message m = Message.getRootAsMessage(meta.slice(meta.position(), length).order(ByteOrder.LITTLE_ENDIAN));
            if (m.headerType() != MessageHeader.RecordBatch) {
                throw new FormatException(file, offset, "a RecordBatch message", "message type " + m.headerType());
            }
            if (fromFooter && m.bodyLength() != bodyLength) {
                throw new FormatException(file, offset, "a record batch message whose bodyLength equals the footer's "
                        + "Block.bodyLength of " + bodyLength + " bytes", "a bodyLength of " + m.bodyLength() + " bytes");
            }
            rb = (RecordBatch) m.header(new RecordBatch());
        } catch (FormatException e) {
            throw e;
        } catch (RuntimeException e) {
            throw unparsable(file, offset, "a record batch message (flatbuffer)", e);
        }
        long[] nodeLength;
        long[] nullCount;
        long[] bufOffset;
        long[] bufLength;
        long rows;
        CompressionUtil.CodecType codec;
        try {
            int nodes = rb.nodesLength();
            int buffers = rb.buffersLength();
            if (nodes < 0 || buffers < 0 || (long) nodes * 16 > length || (long) buffers * 16 > length) {
                throw new FormatException(file, offset, "field nodes and buffers that fit the message", nodes + " and " + buffers);
            }
            nodeLength = new long[nodes];
            nullCount = new long[nodes];
            for (int i = 0; i < nodes; i++) {
                nodeLength[i] = rb.nodes(i).length();
                nullCount[i] = rb.nodes(i).nullCount();
                if (nodeLength[i] < 0 || nullCount[i] < 0 || nullCount[i] > nodeLength[i]) {
                    throw new FormatException(file, offset, "a field node with 0 <= nulls <= length",
                            nullCount[i] + " nulls of " + nodeLength[i]);
                }
            }
            bufOffset = new long[buffers];
            bufLength = new long[buffers];
            for (int i = 0; i < buffers; i++) {
                bufOffset[i] = rb.buffers(i).offset();
                bufLength[i] = rb.buffers(i).length();
            }
            rows = rb.length();
            if (rows < 0) {
                throw new FormatException(file, offset, "a record batch length of at least 0 rows", rows + " rows");
            }
            BodyCompression bc = rb.compression();
            if (bc != null && bc.method() != BodyCompressionMethod.BUFFER) {
                throw new FormatException(file, offset, "body compression method BUFFER (0)", "method " + bc.method());
            }
            if (bc != null && bc.codec() != CompressionType.LZ4_FRAME && bc.codec() != CompressionType.ZSTD) {
                throw new FormatException(file, offset, "compression codec LZ4_FRAME (0) or ZSTD (1)", "codec " + bc.codec());
            }
            codec = bc == null ? CompressionUtil.CodecType.NO_COMPRESSION
                    : CompressionUtil.CodecType.fromCompressionType(bc.codec());
        } catch (FormatException e) {
            throw e;
        } catch (RuntimeException e) {
            throw unparsable(file, offset, "a record batch message (flatbuffer)", e);
        }
        for (int i = 0; i < bufOffset.length; i++) {
            if (bufOffset[i] < 0 || bufLength[i] < 0 || bufOffset[i] > bodyLength - bufLength[i]) {
                throw new FormatException(file, offset, "buffer " + i + " inside the body of " + bodyLength + " bytes",
                        bufLength[i] + " bytes at body offset " + bufOffset[i]);
            }
        }
        return new BatchInfo(offset, bodyOffset, bodyLength, rows, nodeLength, nullCount, bufOffset, bufLength, codec);
    }

    /**
     * A flatbuffer that does not parse: what was expected where, without the Java exception's class or message in the
     * text (it is the cause).
     */
    private static FormatException unparsable(Path file, long offset, String expected, RuntimeException e) {
        return new FormatException(file, offset, expected, "bytes that do not parse as one", e);
    }

    /** Converts and checks a schema: at least one field, and every type's parameters in range. */
    private static Schema schema(Path file, long offset, org.apache.arrow.flatbuf.Schema fb) throws FormatException {
        Schema schema;
        try {
            schema = Schema.convertSchema(fb);
        } catch (RuntimeException e) {
            throw unparsable(file, offset, "an Arrow schema (flatbuffer)", e);
        }
        if (schema.getFields().isEmpty()) {
            throw new FormatException(file, offset, "a schema with at least one field", "a schema of none");
        }
        for (Field f : schema.getFields()) {
            checkField(file, offset, f);
        }
        return schema;
    }

    private static void checkField(Path file, long offset, Field f) throws FormatException {
        if (f.getName() == null) {
            throw new FormatException(file, offset, "a name for every field", "a field of type " + f.getType()
                    + " without one");
        }
        String where = "field '" + f.getName() + "': ";
        ArrowType t = f.getType();
        if (t instanceof ArrowType.Int i && i.getBitWidth() != 8 && i.getBitWidth() != 16 && i.getBitWidth() != 32
                && i.getBitWidth() != 64) {
            throw new FormatException(file, offset, where + "an Int bit width of 8, 16, 32 or 64", "a bit width of "
                    + i.getBitWidth());
        }
        if (t instanceof ArrowType.FixedSizeList l) {
            if (l.getListSize() < 0) {
                throw new FormatException(file, offset, where + "a FixedSizeList size of at least 0", "a size of "
                        + l.getListSize());
            }
            if (f.getChildren().size() != 1) {
                throw new FormatException(file, offset, where + "a FixedSizeList with one child field", f.getChildren().size()
                        + " child fields");
            }
        }
        if (t instanceof ArrowType.FixedSizeBinary b && b.getByteWidth() < 0) {
            throw new FormatException(file, offset, where + "a FixedSizeBinary width of at least 0 bytes", "a width of "
                    + b.getByteWidth());
        }
        for (Field c : f.getChildren()) {
            checkField(file, offset, c);
        }
    }

    /**
     * Checks a record batch's metadata against the schema and itself, so that a damaged file is refused at open (by the
     * loader and by {@code inspect}) rather than read short or past its data: field nodes and buffers for every field,
     * every top-level column as long as the batch, a FixedSizeList's child {@code length x size} elements, and (for an
     * uncompressed body) every fixed-width column's buffers long enough for its length. Sizes are computed exactly; a
     * size beyond 64 bits is reported as damage.
     */
    private static BatchInfo checked(Path file, Schema schema, BatchInfo info) throws FormatException {
        long at = info.messageOffset();
        int needNodes = 0;
        int needBuffers = 0;
        for (Field f : schema.getFields()) {
            needNodes += ArrowFieldIndex.nodes(f);
            needBuffers += ArrowFieldIndex.buffers(f);
        }
        if (info.nodeLength().length < needNodes || info.bufferOffset().length < needBuffers) {
            throw new FormatException(file, at, "a record batch with " + needNodes + " field nodes and " + needBuffers
                    + " buffers for the schema", info.nodeLength().length + " field nodes and " + info.bufferOffset().length
                    + " buffers");
        }
        int node = 0;
        int buffer = 0;
        try {
            for (Field f : schema.getFields()) {
                String where = "column '" + f.getName() + "': ";
                long length = info.nodeLength()[node];
                if (length != info.rows()) {
                    throw new FormatException(file, at, where + "a field node of the record batch's " + info.rows() + " rows",
                            length + " rows");
                }
                ArrowType t = f.getType();
                long childLength = 0;
                if (f.getDictionary() != null) {
                    node += ArrowFieldIndex.nodes(f);
                    buffer += ArrowFieldIndex.buffers(f);
                    continue; // its indices; refused by name where it is read
                }
                if (t instanceof ArrowType.FixedSizeList l) {
                    childLength = Math.multiplyExact(length, l.getListSize());
                    if (info.nodeLength()[node + 1] != childLength) {
                        throw new FormatException(file, at, where + "a child of " + childLength + " elements (" + length
                                + " rows x list size " + l.getListSize() + ")", info.nodeLength()[node + 1] + " elements");
                    }
                }
                if (!info.compressed()) {
                    checkBuffers(file, info, f, node, buffer, length, childLength);
                }
                node += ArrowFieldIndex.nodes(f);
                buffer += ArrowFieldIndex.buffers(f);
            }
        } catch (ArithmeticException e) {
            throw new FormatException(file, at, "record batch sizes that fit 64 bits", "sizes that overflow", e);
        }
        return info;
    }

    /**
     * An uncompressed column's buffers must hold its length, by the buffer layout's rule ({@link #column}): validity
     * (may be empty without nulls), offsets (may be empty at 0 rows), fixed-width values; computed exactly.
     */
    private static void checkBuffers(Path file, BatchInfo info, Field f, int node, int buffer, long length, long childLength)
            throws FormatException {
        ArrowType t = f.getType();
        long nulls = info.nullCount()[node];
        checkBuffer(file, info, f, buffer, "validity", Math.ceilDiv(length, 8), nulls == 0);
        if (t instanceof ArrowType.FixedSizeList && f.getChildren().size() == 1 && bitWidth(f.getChildren().get(0).getType()) > 0) {
            int bits = bitWidth(f.getChildren().get(0).getType());
            checkBuffer(file, info, f, buffer + 1, "child validity", Math.ceilDiv(childLength, 8), info.nullCount()[node + 1] == 0);
            checkBuffer(file, info, f, buffer + 2, "child values", bits == 1 ? Math.ceilDiv(childLength, 8)
                    : Math.multiplyExact(childLength, bits / 8), false);
        } else if (t instanceof ArrowType.FixedSizeBinary b) {
            checkBuffer(file, info, f, buffer + 1, "values", Math.multiplyExact(length, b.getByteWidth()), false);
        } else if (bitWidth(t) > 0) {
            checkBuffer(file, info, f, buffer + 1, "values", bitWidth(t) == 1 ? Math.ceilDiv(length, 8)
                    : Math.multiplyExact(length, bitWidth(t) / 8), false);
        } else if (ArrowBatchLayout.Column.offsetWidth(t) > 0) {
            checkBuffer(file, info, f, buffer + 1, "offsets", Math.multiplyExact(Math.addExact(length, 1),
                    ArrowBatchLayout.Column.offsetWidth(t)), length == 0);
        }
        // other types: batchLayout refuses them by name
    }

    private static void checkBuffer(Path file, BatchInfo info, Field f, int index, String what, long need,
                                    boolean mayBeEmpty) throws FormatException {
        long length = info.bufferLength()[index];
        if (need > 0 && length < need && !(mayBeEmpty && length == 0)) {
            throw new FormatException(file, Math.addExact(info.bodyOffset(), info.bufferOffset()[index]), "column '"
                    + f.getName() + "': a " + what + " buffer (buffer " + index + ") of at least " + need + " bytes for "
                    + info.rows() + " rows" + (mayBeEmpty ? " (or none)" : ""), length + " bytes");
        }
    }

    private static byte[] read(FileChannel ch, Path file, long offset, int length) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(length);
        while (buf.hasRemaining()) {
            if (ch.read(buf, offset + buf.position()) < 0) {
                throw new FormatException(file, offset + buf.position(), length + " bytes", "end of file");
            }
        }
        return buf.array();
    }

    private static String bytes(long n) {
        return n == 1 ? "1 byte" : n + " bytes";
    }

    private static boolean allFF(byte[] b) {
        for (byte x : b) {
            if (x != (byte) 0xFF) {
                return false;
            }
        }
        return true;
    }

    private static String quote(byte[] b) {
        StringBuilder sb = new StringBuilder("'");
        for (byte x : b) {
            sb.append(x >= 32 && x < 127 ? String.valueOf((char) x) : String.format("\\x%02x", x & 0xff));
        }
        return sb.append("'").toString();
    }

    /** @return the file */
    public Path file() {
        return file;
    }

    /** @return the schema */
    public Schema schema() {
        return schema;
    }

    /** @return the top-level column names, in schema order */
    public List<String> columns() {
        return columns;
    }

    /** @return number of record batches */
    public int batchCount() {
        return batches.size();
    }

    /**
     * @param batch record batch index
     * @return rows in that batch
     */
    public long rows(int batch) {
        return batches.get(batch).rows();
    }

    /**
     * @param batch record batch index
     * @return the batch's body compression: {@code NO_COMPRESSION}, {@code LZ4_FRAME} or {@code ZSTD}
     */
    public CompressionUtil.CodecType compression(int batch) {
        return batches.get(batch).codec();
    }

    /**
     * The values of one fixed-width column of one record batch as contiguous records.
     *
     * @param column a top-level column name
     * @param batch record batch index
     * @return its records: file offset of row 0, bytes per row, rows; for a compressed body (LZ4_FRAME, ZSTD) a
     *     {@link CompressedArrowRecords}, whose values are decoded on the host
     * @throws FormatException naming the column and batch when the column is not fixed-width, has nulls or is
     *     dictionary-encoded; or when its values buffer is shorter than its rows need
     * @throws IllegalArgumentException if there is no such column (naming those that exist) or batch
     */
    public RecordLayout records(String column, int batch) throws FormatException {
        BatchInfo info = batches.get(java.util.Objects.checkIndex(batch, batches.size()));
        int i = index.indexOf(column);
        if (i < 0) {
            throw new IllegalArgumentException(file + ": no column '" + column + "'; columns are " + columns());
        }
        Field field = index.fields().get(i);
        int node = index.nodeStart(i);
        int buffer = index.bufferStart(i);
        String where = "column '" + column + "' of record batch " + batch;
        long at = info.bodyOffset();
        if (field.getDictionary() != null) {
            throw new FormatException(file, at, where + ": dictionary-encoded columns are not supported on the device path");
        }
        DType dtype;
        long[] shape;
        int values;
        int[] checkedNodes;
        ArrowType t = field.getType();
        if (t instanceof ArrowType.FixedSizeList list && field.getChildren().size() == 1
                && ArrowTypes.dtype(field.getChildren().get(0).getType()) != null) {
            dtype = ArrowTypes.dtype(field.getChildren().get(0).getType());
            shape = new long[] {list.getListSize()};
            values = buffer + 2; // list validity, child validity, child values
            checkedNodes = new int[] {node, node + 1};
        } else if (t instanceof ArrowType.FixedSizeBinary fsb) {
            dtype = DType.UINT8;
            shape = new long[] {fsb.getByteWidth()};
            values = buffer + 1;
            checkedNodes = new int[] {node};
        } else if (ArrowTypes.dtype(t) != null) {
            dtype = ArrowTypes.dtype(t);
            shape = new long[0];
            values = buffer + 1;
            checkedNodes = new int[] {node};
        } else {
            throw new FormatException(file, at, where + ": type " + t + " is not a fixed-width column; the device path reads "
                    + "integers, floats, FixedSizeBinary and FixedSizeList of those");
        }
        for (int n : checkedNodes) {
            if (n >= info.nullCount().length || values >= info.bufferOffset().length) {
                throw new FormatException(file, at, where + ": the metadata has too few field nodes or buffers for the schema");
            }
            if (info.nullCount()[n] > 0) {
                throw new FormatException(file, at, where + " has " + info.nullCount()[n] + " nulls: validity bitmaps are not "
                        + "delivered to the device yet");
            }
        }
        long rows = info.nodeLength()[node];
        long recordBytes;
        long need;
        try {
            recordBytes = Math.multiplyExact(dtype.itemSize(), shape.length == 0 ? 1 : shape[0]);
            need = Math.multiplyExact(rows, recordBytes);
        } catch (ArithmeticException e) {
            throw new FormatException(file, at, where + ": values of at most " + Long.MAX_VALUE + " bytes", rows + " rows of "
                    + dtype.itemSize() + " x " + (shape.length == 0 ? 1 : shape[0]) + " bytes", e);
        }
        long valuesAt = at + info.bufferOffset()[values];
        if (info.compressed()) {
            if (need > HostDecodedRecords.MAX_DECODED_BYTES) {
                throw new FormatException(file, valuesAt, where + ": decoded values of at most "
                        + HostDecodedRecords.MAX_DECODED_BYTES + " bytes (one host decode buffer)", need + " bytes");
            }
            return new CompressedArrowRecords(file, batch, values, info.codec(), dtype, shape, rows, recordBytes, valuesAt,
                    info.bufferLength()[values]);
        }
        if (info.bufferLength()[values] < need) {
            throw new FormatException(file, at + info.bufferOffset()[values], where + ": a values buffer of " + need + " bytes ("
                    + rows + " rows x " + recordBytes + ")", info.bufferLength()[values] + " bytes");
        }
        return new Records(file, dtype, shape, rows, recordBytes, at + info.bufferOffset()[values], fileSize);
    }

    /**
     * The layout of one whole record batch: body extent, rows, and every column's buffers as the metadata gives them.
     *
     * @param batch record batch index
     * @return its layout, all columns in schema order
     * @throws FormatException naming the column and batch when a column is dictionary-encoded or of a type without a
     *     buffer layout (nested types other than FixedSizeList of a primitive, views, unions, ...), when the
     *     metadata has too few field nodes or buffers for the schema, or (uncompressed bodies) when a buffer is
     *     shorter than the column's length needs
     * @throws IndexOutOfBoundsException if there is no such batch
     */
    public ArrowBatchLayout batchLayout(int batch) throws FormatException {
        return batchLayout(batch, columns());
    }

    /**
     * As {@link #batchLayout(int)}, for some columns only; the others may be of any type.
     *
     * @param batch record batch index
     * @param wanted top-level column names, in the order the layout lists them
     * @return the layout of those columns
     * @throws FormatException as {@link #batchLayout(int)}, for the wanted columns
     * @throws IllegalArgumentException if a wanted column does not exist, naming those that do
     * @throws IndexOutOfBoundsException if there is no such batch
     */
    public ArrowBatchLayout batchLayout(int batch, List<String> wanted) throws FormatException {
        BatchInfo info = batches.get(java.util.Objects.checkIndex(batch, batches.size()));
        java.util.Map<String, ArrowBatchLayout.Column> found = new java.util.HashMap<>();
        java.util.Set<String> want = new java.util.HashSet<>(wanted); // not List.contains per field: O(columns^2)
        List<Field> fields = index.fields();
        for (int i = 0; i < fields.size(); i++) {
            Field f = fields.get(i);
            if (want.contains(f.getName())) {
                found.put(f.getName(), column(info, batch, f, index.nodeStart(i), index.bufferStart(i)));
            }
        }
        List<ArrowBatchLayout.Column> cols = new ArrayList<>();
        for (String w : wanted) {
            ArrowBatchLayout.Column c = found.get(w);
            if (c == null) {
                throw new IllegalArgumentException(file + ": no column '" + w + "'; columns are " + columns());
            }
            cols.add(c);
        }
        return new ArrowBatchLayout(file, batch, info.bodyOffset(), info.bodyLength(), info.rows(), info.codec(), cols);
    }

    private ArrowBatchLayout.Column column(BatchInfo info, int batch, Field f, int node, int buffer) throws FormatException {
        String where = "column '" + f.getName() + "' of record batch " + batch;
        long at = info.bodyOffset();
        if (f.getDictionary() != null) {
            throw new FormatException(file, at, where + ": dictionary-encoded columns have no buffer layout");
        }
        ArrowType t = f.getType();
        ArrowType child = null;
        List<ArrowBatchLayout.Role> roles;
        if (t instanceof ArrowType.FixedSizeList && f.getChildren().size() == 1
                && bitWidth(f.getChildren().get(0).getType()) > 0 && f.getChildren().get(0).getDictionary() == null) {
            child = f.getChildren().get(0).getType();
            roles = List.of(ArrowBatchLayout.Role.VALIDITY, ArrowBatchLayout.Role.CHILD_VALIDITY,
                    ArrowBatchLayout.Role.CHILD_VALUES);
        } else if (bitWidth(t) > 0 || t instanceof ArrowType.FixedSizeBinary) {
            roles = List.of(ArrowBatchLayout.Role.VALIDITY, ArrowBatchLayout.Role.VALUES);
        } else if (ArrowBatchLayout.Column.offsetWidth(t) > 0) {
            roles = List.of(ArrowBatchLayout.Role.VALIDITY, ArrowBatchLayout.Role.OFFSETS, ArrowBatchLayout.Role.VALUES);
        } else {
            throw new FormatException(file, at, where + ": type " + t + " has no buffer layout; laid out are "
                    + "integers, floats, Bool, FixedSizeBinary, FixedSizeList of a primitive, Binary, Utf8, LargeBinary "
                    + "and LargeUtf8");
        }
        int lastNode = node + (child == null ? 0 : 1);
        if (lastNode >= info.nodeLength().length || buffer + roles.size() > info.bufferOffset().length) {
            throw new FormatException(file, at, where + ": the metadata has too few field nodes or buffers for the schema");
        }
        List<ArrowBatchLayout.Buffer> bufs = new ArrayList<>();
        for (int i = 0; i < roles.size(); i++) {
            bufs.add(new ArrowBatchLayout.Buffer(roles.get(i), buffer + i, info.bufferOffset()[buffer + i],
                    info.bufferLength()[buffer + i]));
        }
        ArrowBatchLayout.Column c = new ArrowBatchLayout.Column(f.getName(), t, info.nodeLength()[node],
                info.nullCount()[node], child, child == null ? 0 : info.nullCount()[node + 1], bufs);
        if (child != null && info.nodeLength()[node + 1] != c.childLength()) {
            throw new FormatException(file, at, where + ": a child of " + c.childLength() + " elements (length x list size)",
                    info.nodeLength()[node + 1] + " elements");
        }
        if (!info.compressed()) {
            for (ArrowBatchLayout.Buffer b : bufs) {
                long need = c.neededBytes(b.role());
                boolean optional = (b.role() == ArrowBatchLayout.Role.VALIDITY && c.nullCount() == 0)
                        || (b.role() == ArrowBatchLayout.Role.CHILD_VALIDITY && c.childNullCount() == 0)
                        || (b.role() == ArrowBatchLayout.Role.OFFSETS && c.length() == 0);
                if (need > 0 && b.length() < need && !(optional && b.length() == 0)) {
                    throw new FormatException(file, at + b.offset(), where + ": a " + b.role() + " buffer of at least "
                            + need + " bytes", b.length() + " bytes");
                }
            }
        }
        return c;
    }

    /**
     * @param t an Arrow type
     * @return bits per value of a fixed-width primitive (Int, FloatingPoint: 8 to 64; Bool: 1), else 0
     */
    static int bitWidth(ArrowType t) {
        if (t instanceof ArrowType.Bool) {
            return 1;
        }
        DType d = ArrowTypes.dtype(t);
        return d == null ? 0 : d.itemSize() * 8;
    }
}
