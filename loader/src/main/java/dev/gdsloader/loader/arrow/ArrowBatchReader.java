package dev.gdsloader.loader.arrow;

import dev.gdsloader.cuda.Closeables;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.cufile.CuFileBufferRegistration;
import dev.gdsloader.cufile.CuFileHandle;
import dev.gdsloader.cufile.CuFileMode;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.loader.PathSelector;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.arrow.ArrowBatchLayout;
import dev.gdsloader.formats.arrow.ArrowIpcFile;
import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.ReadPath;
import dev.gdsloader.posix.AlignedMemory;
import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;

/**
 * Reads an Arrow IPC file (file or stream format) one record batch at a time, each batch's body in ONE read into
 * device memory, and exposes its columns as device views ({@link ArrowDeviceColumn}: validity, offsets, values).
 *
 * <p>The read: the body's range rounded out to {@value #ALIGNMENT}-byte boundaries ({@code alignedStart = bodyOffset
 * rounded down}, {@code alignedEnd = bodyOffset + bodyLength rounded up}, clipped by the end of file), so that
 * {@code O_DIRECT} and cuFile can DMA it; a column buffer's address is then {@code base + (bodyOffset - alignedStart)
 * + buffer offset}, the offsets being exactly the metadata's (the format only recommends 8- or 64-byte padding:
 * Arrow columnar format, "Buffer alignment and padding"; "IPC File Format"). Paths:
 * <ul>
 *   <li>GDS / CUFILE_COMPAT: {@code cuFileRead} of the range into a registered device buffer;</li>
 *   <li>BOUNCE: {@code O_DIRECT} (else buffered) {@code pread} into pinned memory, then one {@code cudaMemcpyAsync}
 *       on the reader's stream;</li>
 *   <li>HOST (no GPU): the same {@code pread} into 4 KiB-aligned host memory; addresses are host addresses.</li>
 * </ul>
 * A compressed body (LZ4_FRAME, ZSTD; Arrow columnar format, "Compression") cannot be used as stored: its buffers are
 * read, decoded on the host with Arrow Java's codecs into pinned (HOST: host) memory, each at a 64-byte aligned
 * offset, then copied to the device in one copy; the batch's {@link ArrowBatch#pathReason()} says so
 * ("HOST-DECODE").
 *
 * <p>Memory and ownership: one device buffer per reader (plus one pinned or host staging buffer), sized at open for
 * the largest aligned body and reused for every batch; it grows (is reallocated) only when a decoded body needs more.
 * A batch's views are valid until the next {@link #next()} or {@link #close()}. Each {@code next()} finishes its copy
 * (the stream is synchronized) before it returns, so the views can be used on any stream. Not thread-safe: one
 * thread reads; {@link #close()} is idempotent and frees everything.
 */
public final class ArrowBatchReader implements AutoCloseable {
    /** Alignment of the read range and of the staging memory, bytes ({@code O_DIRECT} and cuFile DMA granularity). */
    public static final long ALIGNMENT = PosixFile.DIRECT_ALIGNMENT;

    /** Alignment of each decoded buffer of a compressed body in memory, bytes (Arrow's recommended alignment). */
    static final long DECODED_ALIGNMENT = 64;

    private final ArrowIpcFile ipc;
    private final List<String> columns;
    private final PathTaken path;
    private final String reason;
    private final long fileSize;
    private PosixFile posix;
    private CuFileHandle cufile;
    private CudaStream stream;
    private DeviceBuffer device;
    private CuFileBufferRegistration registration;
    private PinnedBuffer pinned;
    private AlignedMemory host;
    private int nextBatch;
    private ArrowBatch current;
    private boolean closed;

    private ArrowBatchReader(ArrowIpcFile ipc, List<String> columns, PathTaken path, String reason, long fileSize) {
        this.ipc = ipc;
        this.columns = List.copyOf(columns);
        this.path = path;
        this.reason = reason;
        this.fileSize = fileSize;
    }

    /**
     * Opens a reader of every column.
     *
     * @param file an Arrow IPC file or stream
     * @param requested the path; AUTO decides as the loader does ({@link PathSelector#decideAuto}): GDS where
     *     cuFile does true GPUDirect DMA, else BOUNCE where there is a GPU, else HOST. Device memory is allocated on the calling thread's current device.
     * @return the reader, owned by the caller
     * @throws FormatException if the file is not Arrow IPC, or a column is refused ({@link ArrowIpcFile#batchLayout})
     * @throws IllegalStateException if the requested path cannot run here (GDS: cuFile unusable; GDS or BOUNCE: no GPU)
     * @throws IOException if the file cannot be read
     */
    public static ArrowBatchReader open(Path file, ReadPath requested) throws IOException {
        return open(file, requested, ArrowIpcFile.open(file).columns());
    }

    /**
     * Opens a reader of some columns; the others may be of any type and are not exposed (they are still read, the
     * body being one read).
     *
     * @param file an Arrow IPC file or stream
     * @param requested the path, as {@link #open(Path, ReadPath)}
     * @param columns top-level column names
     * @return the reader, owned by the caller
     * @throws FormatException if the file is not Arrow IPC, or a wanted column is refused, in any batch
     * @throws IllegalArgumentException if a column does not exist
     * @throws IllegalStateException if the requested path cannot run here
     * @throws IOException if the file cannot be read
     */
    public static ArrowBatchReader open(Path file, ReadPath requested, List<String> columns) throws IOException {
        ArrowIpcFile ipc = ArrowIpcFile.open(file);
        long capacity = ALIGNMENT;
        for (int b = 0; b < ipc.batchCount(); b++) {
            ArrowBatchLayout l = ipc.batchLayout(b, columns); // refusals surface at open, not mid-epoch
            capacity = Math.max(capacity, alignUp(l.bodyOffset() + l.bodyLength()) - alignDown(l.bodyOffset()));
        }
        long fileSize = java.nio.file.Files.size(file);
        PathTaken path;
        String reason;
        boolean gpu = Cuda.availability().available();
        CuFileStatus st = null;
        if (requested == ReadPath.GDS) {
            st = CuFileProbe.probe(Optional.of(file.toAbsolutePath().getParent()));
        }
        switch (requested) {
            case GDS -> {
                if (!st.usable()) {
                    throw new IllegalStateException("GDS path requested for " + file + " but cuFile is unusable: " + st.reason());
                }
                path = st.mode() == CuFileMode.GDS ? PathTaken.GDS : PathTaken.CUFILE_COMPAT;
                reason = "requested GDS: " + st.reason();
            }
            case BOUNCE -> {
                if (!gpu) {
                    throw new IllegalStateException("BOUNCE path requested for " + file + " but there is no GPU: "
                            + Cuda.availability().reason());
                }
                path = PathTaken.BOUNCE;
                reason = "requested BOUNCE";
            }
            case HOST -> {
                path = PathTaken.HOST;
                reason = "requested HOST";
            }
            default -> { // the loader's own AUTO rule, so both readers pick alike
                PathSelector.Decision d = PathSelector.decideAuto(file.toAbsolutePath().getParent());
                path = switch (d.path()) {
                    case GDS -> d.cuFile().mode() == CuFileMode.GDS ? PathTaken.GDS : PathTaken.CUFILE_COMPAT;
                    case BOUNCE -> PathTaken.BOUNCE;
                    default -> PathTaken.HOST;
                };
                reason = "AUTO: " + d.reason();
            }
        }
        ArrowBatchReader r = new ArrowBatchReader(ipc, columns, path, reason, fileSize);
        try {
            r.allocate(capacity);
        } catch (IOException | RuntimeException | Error e) {
            try {
                r.close();
            } catch (RuntimeException c) {
                e.addSuppressed(c);
            }
            throw e;
        }
        return r;
    }

    private void allocate(long capacity) throws IOException {
        switch (path) {
            case HOST -> {
                posix = PosixFile.openForRead(ipc.file(), true);
                host = new AlignedMemory(capacity);
            }
            case BOUNCE -> {
                posix = PosixFile.openForRead(ipc.file(), true);
                stream = CudaStream.create();
                pinned = PinnedBuffer.allocate(capacity);
                device = DeviceBuffer.allocate(capacity);
            }
            default -> {
                cufile = CuFileHandle.register(ipc.file());
                stream = CudaStream.create();
                device = DeviceBuffer.allocate(capacity);
                registration = CuFileBufferRegistration.register(device);
            }
        }
    }

    /** @return the file */
    public Path file() {
        return ipc.file();
    }

    /** @return the path every batch of this reader takes (a compressed batch adds a host decode) */
    public PathTaken path() {
        return path;
    }

    /** @return why that path */
    public String pathReason() {
        return reason;
    }

    /** @return record batches in the file */
    public int batchCount() {
        return ipc.batchCount();
    }

    /** @return the columns this reader exposes, in order */
    public List<String> columns() {
        return columns;
    }

    /** @return whether {@link #close()} was called */
    public boolean isClosed() {
        return closed;
    }

    /** @return whether another record batch remains */
    public boolean hasNext() {
        return !closed && nextBatch < ipc.batchCount();
    }

    /**
     * Reads the next record batch into the reader's memory, invalidating the previous one.
     *
     * @return the batch, valid until the next call or {@link #close()}
     * @throws NoSuchElementException if every batch was read
     * @throws IllegalStateException if the reader is closed
     * @throws FormatException if the body is shorter in the file than its metadata says, or a compressed buffer does
     *     not decode
     * @throws IOException if a read fails (naming file, offset and length)
     */
    public ArrowBatch next() throws IOException {
        if (closed) {
            throw new IllegalStateException(ipc.file() + ": the Arrow batch reader is closed");
        }
        if (nextBatch >= ipc.batchCount()) {
            throw new NoSuchElementException(ipc.file() + ": all " + ipc.batchCount() + " record batches were read");
        }
        if (current != null) {
            current.invalidate();
            current = null;
        }
        ArrowBatchLayout l = ipc.batchLayout(nextBatch, columns);
        ArrowBatch b = l.compressed() ? readDecoded(l) : readStored(l);
        nextBatch++;
        current = b;
        return b;
    }

    /** One aligned read of the body as stored. */
    private ArrowBatch readStored(ArrowBatchLayout l) throws IOException {
        long start = alignDown(l.bodyOffset());
        long span = Math.min(alignUp(l.bodyOffset() + l.bodyLength()), alignUp(fileSize)) - start;
        long need = l.bodyOffset() + l.bodyLength() - start;
        long got = 0;
        long base;
        if (l.bodyLength() > 0) {
            switch (path) {
                case HOST -> got = posix.read(host.segment(), 0, span, start);
                case BOUNCE -> {
                    got = posix.read(pinned.segment(), 0, span, start);
                    if (got >= need) {
                        stream.copyToDevice(device, 0, pinned, 0, need);
                        stream.synchronize();
                    }
                }
                default -> got = cufile.read(device, 0, span, start);
            }
            if (got < need) {
                throw new FormatException(ipc.file(), start + got, "record batch " + l.batch() + ": a body of "
                        + l.bodyLength() + " bytes at " + l.bodyOffset(), "end of file after " + got + " bytes of the "
                        + span + "-byte aligned read from " + start);
            }
        }
        base = baseAddress() + (l.bodyOffset() - start);
        List<ArrowDeviceColumn> cols = new ArrayList<>();
        for (ArrowBatchLayout.Column c : l.columns()) {
            List<ArrowDeviceColumn.Span> spans = new ArrayList<>();
            for (ArrowBatchLayout.Buffer buf : c.buffers()) {
                spans.add(buf.length() == 0 ? ArrowDeviceColumn.Span.ABSENT
                        : new ArrowDeviceColumn.Span(base + buf.offset(), buf.length()));
            }
            cols.add(column(c, spans));
        }
        return new ArrowBatch(this, l, cols, path, reason + "; record batch " + l.batch() + ": one read of " + span
                + " bytes at file offset " + start + " (body " + l.bodyLength() + " bytes at " + l.bodyOffset() + ")");
    }

    /** Reads each stored buffer, decodes it on the host into staging memory, then one copy to the device. */
    private ArrowBatch readDecoded(ArrowBatchLayout l) throws IOException {
        List<List<byte[]>> decoded = new ArrayList<>();
        long total = 0;
        try (FileChannel ch = FileChannel.open(ipc.file(), StandardOpenOption.READ)) {
            for (ArrowBatchLayout.Column c : l.columns()) {
                List<byte[]> bufs = new ArrayList<>();
                for (ArrowBatchLayout.Buffer b : c.buffers()) {
                    byte[] d = l.decode(b, readFully(ch, l.bodyOffset() + b.offset(), b.length(), l));
                    bufs.add(d);
                    total = alignUp(total, DECODED_ALIGNMENT) + d.length;
                }
                decoded.add(bufs);
            }
        }
        ensureCapacity(Math.max(total, 1));
        MemorySegment staging = path == PathTaken.HOST ? host.segment() : pinned.segment();
        long at = 0;
        List<long[]> places = new ArrayList<>();
        for (List<byte[]> bufs : decoded) {
            for (byte[] d : bufs) {
                at = alignUp(at, DECODED_ALIGNMENT);
                MemorySegment.copy(d, 0, staging, ValueLayout.JAVA_BYTE, at, d.length);
                places.add(new long[] {at, d.length});
                at += d.length;
            }
        }
        if (path != PathTaken.HOST && total > 0) {
            stream.copyToDevice(device, 0, pinned, 0, total);
            stream.synchronize();
        }
        long base = baseAddress();
        List<ArrowDeviceColumn> cols = new ArrayList<>();
        int p = 0;
        for (ArrowBatchLayout.Column c : l.columns()) {
            List<ArrowDeviceColumn.Span> spans = new ArrayList<>();
            for (int i = 0; i < c.buffers().size(); i++, p++) {
                long[] pl = places.get(p);
                spans.add(pl[1] == 0 ? ArrowDeviceColumn.Span.ABSENT : new ArrowDeviceColumn.Span(base + pl[0], pl[1]));
            }
            cols.add(column(c, spans));
        }
        String how = path == PathTaken.HOST ? "into host memory" : "into pinned memory, then one copy of " + total
                + " bytes to the device";
        return new ArrowBatch(this, l, cols, path, reason + "; HOST-DECODE: record batch " + l.batch() + " is "
                + l.codec() + "-compressed: each buffer decoded on the host " + how);
    }

    /** Makes the staging (and device) memory hold at least {@code bytes}, reallocating it if needed. */
    private void ensureCapacity(long bytes) throws IOException {
        if (path == PathTaken.HOST) {
            if (host.segment().byteSize() < bytes) {
                host.close();
                host = null;
                host = new AlignedMemory(alignUp(bytes));
            }
            return;
        }
        if (pinned == null || pinned.size() < bytes) {
            if (pinned != null) {
                pinned.close();
                pinned = null;
            }
            pinned = PinnedBuffer.allocate(Math.max(alignUp(bytes), device.size()));
        }
        if (device.size() < bytes) {
            if (registration != null) {
                registration.close();
                registration = null;
            }
            device.close();
            device = null;
            device = DeviceBuffer.allocate(alignUp(bytes));
            if (cufile != null) {
                registration = CuFileBufferRegistration.register(device);
            }
        }
    }

    private ArrowDeviceColumn column(ArrowBatchLayout.Column c, List<ArrowDeviceColumn.Span> spans) {
        ArrowDeviceColumn.Span absent = ArrowDeviceColumn.Span.ABSENT;
        boolean device = path.onDevice();
        if (c.childType() != null) {
            return new ArrowDeviceColumn(c.name(), c.type(), c.childType(), c.length(), c.nullCount(), c.childNullCount(),
                    spans.get(0), absent, spans.get(2), spans.get(1), device);
        }
        if (spans.size() == 3) {
            return new ArrowDeviceColumn(c.name(), c.type(), null, c.length(), c.nullCount(), 0, spans.get(0), spans.get(1),
                    spans.get(2), absent, device);
        }
        return new ArrowDeviceColumn(c.name(), c.type(), null, c.length(), c.nullCount(), 0, spans.get(0), absent,
                spans.get(1), absent, device);
    }

    private byte[] readFully(FileChannel ch, long offset, long length, ArrowBatchLayout l) throws IOException {
        if (length > Integer.MAX_VALUE - 8) {
            throw new FormatException(ipc.file(), offset, "record batch " + l.batch() + ": a compressed buffer of at most "
                    + (Integer.MAX_VALUE - 8) + " bytes", length + " bytes");
        }
        ByteBuffer b = ByteBuffer.allocate((int) length);
        while (b.hasRemaining()) {
            if (ch.read(b, offset + b.position()) < 0) {
                throw new FormatException(ipc.file(), offset + b.position(), "record batch " + l.batch() + ": " + length
                        + " bytes from " + offset, "end of file");
            }
        }
        return b.array();
    }

    private long baseAddress() {
        return path == PathTaken.HOST ? host.segment().address() : device.address();
    }

    /**
     * Copies bytes of the current batch back to the Java heap (for checks, tests and inspection; not a fast path).
     *
     * @param span a span of a column of the current batch
     * @return its bytes
     * @throws IllegalStateException if there is no current batch or the reader is closed
     * @throws IllegalArgumentException if the span is not inside the reader's memory
     */
    public byte[] copyToHeap(ArrowDeviceColumn.Span span) {
        if (current == null) {
            throw new IllegalStateException(ipc.file() + ": no current record batch");
        }
        current.checkValid();
        if (!span.present()) {
            return new byte[0];
        }
        long base = baseAddress();
        long size = path == PathTaken.HOST ? host.segment().byteSize() : device.size();
        long off = span.address() - base;
        if (off < 0 || span.bytes() > size - off) {
            throw new IllegalArgumentException(span + " is not inside the reader's " + size + " bytes at " + base);
        }
        if (path == PathTaken.HOST) {
            return host.segment().asSlice(off, span.bytes()).toArray(ValueLayout.JAVA_BYTE);
        }
        try (PinnedBuffer out = PinnedBuffer.allocate(span.bytes())) {
            stream.copyToHost(out, 0, device, off, span.bytes());
            stream.synchronize();
            return out.segment().asSlice(0, span.bytes()).toArray(ValueLayout.JAVA_BYTE);
        }
    }

    /**
     * Frees the device, pinned and host memory and closes the file, once; later calls do nothing. Every resource is
     * freed even when an earlier step fails (the stream's work failed, a free reported an error).
     *
     * @throws RuntimeException the first failure, with later ones suppressed, after everything was freed
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (current != null) {
            current.invalidate();
        }
        CudaStream s = stream;
        Exception first = Closeables.closeAll(s == null ? null : (AutoCloseable) s::synchronize, registration,
                device, pinned, host, stream, cufile, posix);
        if (first != null) {
            throw first instanceof RuntimeException re ? re
                    : new IllegalStateException(ipc.file() + ": closing the Arrow batch reader failed", first);
        }
    }

    private static long alignDown(long x) {
        return x & -ALIGNMENT;
    }

    private static long alignUp(long x) {
        return alignUp(x, ALIGNMENT);
    }

    private static long alignUp(long x, long a) {
        return (x + a - 1) & -a;
    }
}
