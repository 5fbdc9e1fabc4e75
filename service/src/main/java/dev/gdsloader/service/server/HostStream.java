package dev.gdsloader.service.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.ColumnView;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.protocol.BatchSchema;
import dev.gdsloader.service.protocol.Messages;
import dev.gdsloader.service.protocol.Protocol;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Streams one epoch of a session as Arrow record batches ({@code DoGet}, HOST delivery), one per loader batch.
 *
 * <p>No copy of the column bytes on the server: each column's host memory in the loader's slot is wrapped as an
 * {@link ArrowBuf} ({@link BufferAllocator#wrapForeignAllocation}) that holds a reference on the {@link Batch} and on
 * the session; Flight sends it zero-copy ({@code setUseZeroCopy(true)}: gRPC keeps the Arrow buffers retained until
 * its Netty buffer is written and freed), and the last release of a column's buffer closes its reference, so the slot
 * goes back to the loader only when gRPC is done with its bytes. BOOL columns are the exception: Arrow's Bool is
 * bit-packed, our BOOL one byte per element, so they are packed (one copy). {@code _record} and {@code _padding} are
 * written into small buffers of the session's allocator.
 *
 * <p>Back-pressure: before each batch the stream waits until gRPC's {@code isReady()} (its outbound buffer has
 * drained below gRPC's threshold; polled, see {@link #awaitReady}) and until a slot is not held by gRPC, so a client that stops reading leaves at most the batches already handed to gRPC on
 * the server, and those hold loader slots: the loader cannot run further ahead than its ring. Runs on the calling
 * (Flight executor) thread; not thread-safe.
 */
final class HostStream {
    /** The HOST mode's server side: {@code DoGet}, read through host memory (path AUTO becomes HOST). */
    static final ServerDelivery DELIVERY = new ServerDelivery() {
        @Override
        public Rpc rpc() {
            return Rpc.DO_GET;
        }

        @Override
        public LoaderOptions options(LoaderOptions o) {
            if (o.path() == ReadPath.AUTO) {
                return o.withPath(ReadPath.HOST);
            } else if (o.path() != ReadPath.HOST) {
                throw new IllegalArgumentException("delivery HOST reads through host memory, but path " + o.path()
                        + " was asked for, which puts batches in GPU memory: ask for path HOST or AUTO, or CUDA_IPC delivery");
            }
            return o;
        }

        @Override
        public String refusal(GdsLoader loader) {
            return null;
        }

        @Override
        public Schema schema(GdsLoader loader) {
            return BatchSchema.of(loader.dataset().columns());
        }

        @Override
        public void serve(Session session, FlightStream fromClient, ServerStreamListener toClient, BooleanSupplier closing) {
            new HostStream(session, toClient, closing).run();
        }

        @Override
        public boolean parksAfterEpoch() {
            return true; // sent to its end: kept for the client's next epoch, which its loader starts now
        }
    };

    private final Session session;
    private final ServerStreamListener listener;
    private final BooleanSupplier closing;
    private final Object readyMonitor = new Object();
    /** Batches whose wrapped memory gRPC still holds: the loader cannot fill more than its slots minus these. */
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();

    HostStream(Session session, ServerStreamListener listener, BooleanSupplier closing) {
        this.session = session;
        this.listener = listener;
        this.closing = closing;
    }

    /**
     * Sends the epoch, then completes the stream.
     *
     * @throws org.apache.arrow.flight.FlightRuntimeException CANCELLED if the client went away, UNAVAILABLE if the
     *     server is closing; anything the loader throws
     */
    void run() {
        GdsLoader loader = session.loader();
        BufferAllocator a = session.arrow();
        Schema schema = BatchSchema.of(loader.dataset().columns());
        try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, a)) {
            listener.setUseZeroCopy(true);
            listener.start(root);
            Handoff handoff = Handoff.install(listener, root);
            VectorLoader vectors = new VectorLoader(root);
            Iterator<Batch> epoch = session.epoch(); // started ahead when the session was parked
            while (true) {
                awaitReady(listener, closing);
                awaitFreeSlot(loader.slots());
                if (!epoch.hasNext()) {
                    break;
                }
                Batch b = epoch.next();
                ArrowRecordBatch rb;
                try {
                    rb = recordBatch(b, a);
                } finally {
                    b.close(); // the wrapped buffers hold their own references
                }
                if (handoff != null) {
                    handoff.send(rb, listener, metadata(a, b, loader));
                } else {
                    try (rb) {
                        vectors.load(rb);
                    }
                    listener.putNext(metadata(a, b, loader));
                    root.clear(); // what Flight took is retained by its message until written
                }
            }
            listener.completed();
        }
    }

    /**
     * Hands Flight our record batch as it is, instead of the root's: Flight's {@code putNext} takes the batch it sends
     * from its listener's {@link VectorUnloader} ({@code OutboundStreamListenerImpl.unloader}, Flight 19), which
     * unloads the root, and Arrow Java's root has a validity bitmap for every vector: {@link VectorLoader} allocates
     * and fills one (all valid) for each buffer we leave empty, and the unloader counts its nulls and sends it. For a
     * UINT8 column that is 1/8 more bytes on the wire than the data, plus the filling and counting on this thread.
     * Arrow's IPC format lets a buffer be empty (length 0) when its null count is 0, and readers then take every value
     * as valid (Arrow Java's {@link VectorLoader}, Arrow C++/pyarrow): {@link #recordBatch} already writes exactly that,
     * so sending it unchanged keeps the format standard and drops the bitmaps.
     *
     * <p>Installed by reflection (the field is protected in a package-private Flight class); where that fails (another
     * Flight version) {@link #install} returns null and the stream loads the root as before. One per stream; the
     * stream's thread only.
     */
    static final class Handoff extends VectorUnloader {
        private static final java.lang.reflect.Field UNLOADER = unloaderField();
        private ArrowRecordBatch next;

        private Handoff(VectorSchemaRoot root) {
            super(root);
        }

        private static java.lang.reflect.Field unloaderField() {
            try {
                java.lang.reflect.Field f = Class.forName("org.apache.arrow.flight.OutboundStreamListenerImpl")
                        .getDeclaredField("unloader");
                if (f.getType() != VectorUnloader.class) {
                    return null;
                }
                f.setAccessible(true);
                return f;
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }

        /**
         * @param listener Flight's listener, started (its unloader set)
         * @param root the root it was started with
         * @return the handoff now in place of the listener's unloader, or null if it cannot be put there
         */
        static Handoff install(ServerStreamListener listener, VectorSchemaRoot root) {
            if (UNLOADER == null || !UNLOADER.getDeclaringClass().isInstance(listener)) {
                return null;
            }
            Handoff h = new Handoff(root);
            try {
                UNLOADER.set(listener, h);
                return h;
            } catch (IllegalAccessException | RuntimeException e) {
                return null;
            }
        }

        /**
         * Sends {@code rb} with {@code metadata} through the listener's {@code putNext}; Flight then owns {@code rb}
         * (its message takes the buffers' references and gRPC retains them until written); if {@code putNext} throws
         * before it took the batch, {@code rb} is closed here.
         */
        void send(ArrowRecordBatch rb, ServerStreamListener listener, ArrowBuf metadata) {
            next = rb;
            try {
                listener.putNext(metadata);
            } finally {
                if (next != null) {
                    next.close();
                    next = null;
                }
            }
        }

        @Override
        public ArrowRecordBatch getRecordBatch() {
            ArrowRecordBatch b = next;
            if (b == null) {
                throw new IllegalStateException("Flight asked for a record batch the stream did not hand over");
            }
            next = null;
            return b;
        }
    }

    /**
     * Waits until a slot is not held by gRPC, so that the loader's {@code hasNext()} cannot block on a slot only a
     * client that stopped reading would free; throws if the call or server ends first.
     */
    private void awaitFreeSlot(int slots) {
        while (inFlight.get() >= slots) {
            checkAlive(listener, closing);
            synchronized (readyMonitor) {
                try {
                    readyMonitor.wait(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw org.apache.arrow.flight.CallStatus.CANCELLED.withDescription("interrupted").toRuntimeException();
                }
            }
        }
    }

    private static void checkAlive(ServerStreamListener l, BooleanSupplier closing) {
        if (l.isCancelled()) {
            throw org.apache.arrow.flight.CallStatus.CANCELLED.withDescription("the client cancelled the stream").toRuntimeException();
        }
        if (closing.getAsBoolean()) {
            throw Errors.shuttingDown();
        }
    }

    /**
     * Waits until gRPC can take another message without buffering it; throws if the call or server ends first. Polls
     * (20 us, doubling to 1 ms): gRPC runs a call's callbacks one at a time on its executor, and this stream runs inside
     * one of them, so an onReady handler could not run until the stream ended.
     */
    static void awaitReady(ServerStreamListener l, BooleanSupplier closing) {
        long pause = 20_000;
        while (true) {
            checkAlive(l, closing);
            if (l.isReady()) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(pause);
            if (Thread.interrupted()) {
                throw org.apache.arrow.flight.CallStatus.CANCELLED.withDescription("interrupted").toRuntimeException();
            }
            pause = Math.min(pause * 2, 1_000_000);
        }
    }

    /** @return the batch's app_metadata: {@code {"epoch", "index", "padding", "state"}} */
    private static ArrowBuf metadata(BufferAllocator a, Batch b, GdsLoader loader) {
        ObjectNode n = Protocol.JSON.createObjectNode();
        n.put("epoch", b.epoch());
        n.put("index", b.index());
        n.put("padding", b.paddingCount());
        n.set("state", Messages.tree(loader.state().toJson()));
        return Messages.utf8(a, n.toString());
    }

    /** The batch as an Arrow record batch over its own memory (see the class comment); the caller closes it. */
    private ArrowRecordBatch recordBatch(Batch b, BufferAllocator a) {
        int rows = b.records();
        List<ArrowFieldNode> nodes = new ArrayList<>();
        List<ArrowBuf> buffers = new ArrayList<>();
        List<ArrowBuf> owned = new ArrayList<>();
        java.util.concurrent.atomic.AtomicInteger wrapped = new java.util.concurrent.atomic.AtomicInteger(1);
        inFlight.incrementAndGet();
        try {
            for (ColumnView c : b.columns()) {
                long[] shape = c.shape();
                long n = BatchSchema.elements(java.util.Arrays.copyOfRange(shape, 1, shape.length));
                ArrowBuf data = c.dtype() == DType.BOOL ? packBits(a, c.hostSegment(), Math.multiplyExact(rows, n))
                        : wrap(a, b, c.hostSegment(), wrapped);
                owned.add(data);
                nodes.add(new ArrowFieldNode(rows, 0));
                buffers.add(a.getEmpty()); // validity: absent, no nulls
                if (n != 1) {
                    nodes.add(new ArrowFieldNode(Math.multiplyExact(rows, n), 0));
                    buffers.add(a.getEmpty());
                }
                buffers.add(data);
            }
            ArrowBuf records = a.buffer((long) rows * Long.BYTES);
            owned.add(records);
            for (int i = 0; i < rows; i++) {
                records.setLong((long) i * Long.BYTES, session.globalRecord(b.recordIndex(i)));
            }
            records.writerIndex((long) rows * Long.BYTES);
            nodes.add(new ArrowFieldNode(rows, 0));
            buffers.add(a.getEmpty());
            buffers.add(records);
            long padBytes = (rows + 7L) / 8;
            ArrowBuf padding = a.buffer(padBytes);
            owned.add(padding);
            padding.setZero(0, padding.capacity());
            for (int i = 0; i < rows; i++) {
                if (b.isPadding(i)) {
                    padding.setByte(i >>> 3, padding.getByte(i >>> 3) | (1 << (i & 7)));
                }
            }
            padding.writerIndex(padBytes);
            nodes.add(new ArrowFieldNode(rows, 0));
            buffers.add(a.getEmpty());
            buffers.add(padding);
            return new ArrowRecordBatch(rows, nodes, buffers); // retains each buffer
        } finally {
            for (ArrowBuf o : owned) {
                o.close();
            }
            unwrapped(wrapped); // this method's own count: the batch is in flight while gRPC holds a wrapped column
        }
    }

    /** Drops one count of a batch's wrapped columns; the last makes the batch no longer in flight. */
    private void unwrapped(java.util.concurrent.atomic.AtomicInteger wrapped) {
        if (wrapped.decrementAndGet() == 0) {
            inFlight.decrementAndGet();
            synchronized (readyMonitor) {
                readyMonitor.notifyAll();
            }
        }
    }

    /**
     * Wraps a column's host memory without copying it: the buffer holds a reference on the batch and a hold on the
     * session, both dropped when Arrow's last reference to it is released (by Flight after gRPC wrote it).
     */
    private ArrowBuf wrap(BufferAllocator a, Batch b, MemorySegment segment, java.util.concurrent.atomic.AtomicInteger wrapped) {
        b.retain();
        session.hold();
        wrapped.incrementAndGet();
        try {
            ArrowBuf buf = a.wrapForeignAllocation(new ForeignAllocation(segment.byteSize(), segment.address()) {
                @Override
                protected void release0() {
                    try {
                        b.close();
                    } finally {
                        unwrapped(wrapped);
                        session.unhold();
                    }
                }
            });
            buf.writerIndex(segment.byteSize());
            return buf;
        } catch (RuntimeException | Error e) {
            b.close();
            unwrapped(wrapped);
            session.unhold();
            throw e;
        }
    }

    /** BOOL (one byte per element, nonzero = true) packed into Arrow's bitmap: the one copy of this stream. */
    private static ArrowBuf packBits(BufferAllocator a, MemorySegment bytes, long elements) {
        long out = (elements + 7) / 8;
        ArrowBuf bits = a.buffer(Math.max(1, out));
        bits.setZero(0, bits.capacity());
        for (long i = 0; i < elements; i++) {
            if (bytes.get(ValueLayout.JAVA_BYTE, i) != 0) {
                bits.setByte(i >>> 3, bits.getByte(i >>> 3) | (1 << (i & 7)));
            }
        }
        bits.writerIndex(out);
        return bits;
    }
}
