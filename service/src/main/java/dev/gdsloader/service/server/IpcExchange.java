package dev.gdsloader.service.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaIpc;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.ColumnView;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.protocol.BatchSchema;
import dev.gdsloader.service.protocol.Messages;
import dev.gdsloader.service.protocol.Protocol;
import java.nio.charset.StandardCharsets;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Streams one epoch of a session as CUDA IPC handles ({@code DoExchange}, CUDA_IPC delivery): per batch a record batch
 * of {@code _record} and {@code _padding} only, whose app_metadata names each column's IPC handle, offset and length
 * in the slot's device buffer (service/README.md). The client sends {@code {"release": ID}} once it is done with a
 * batch, or {@code {"release": ID, "event": HANDLE}} once its work on the batch is enqueued on its stream after which it
 * recorded that interprocess event; a reader thread closes that batch, or releases it after the client's event on a
 * stream of the server's ({@link ReleaseEvents}), so the loader refills its slot only after the client's work. At most
 * the ring's slots are lent at once: the stream waits for a release before taking another batch.
 *
 * <p>Readiness on the device, stream-ordered: per batch the server's stream waits for the loader's ready event and
 * records an interprocess event ({@link IpcEvents}, one per slot) whose handle goes out as {@code "event"}; the
 * client waits on it. Where the driver refuses interprocess events the server synchronizes the ready event before
 * sending and sends {@code "event": null} (the batch is complete on the device when the client gets it).
 * After the epoch's last batch the server sends the end message ({@code {"end": true, "epoch": E, "batches": N}},
 * metadata only) and keeps its side open, reading releases, until the client asks for the next epoch
 * ({@code {"next": E+1}}: streamed on the same loader, buffers and handles) or half-closes (it does so once it released
 * every batch and unmapped the slots) or goes away; only then does the server complete the call and free the loader,
 * since the client maps its buffers until then (and gRPC drops what a client sends after the server completed). Runs on the calling thread plus one reader thread; not thread-safe otherwise.
 */
final class IpcExchange {
    private static final Logger LOG = Logger.getLogger(IpcExchange.class.getName());
    /** The CUDA_IPC mode's server side: {@code DoExchange}, batches in GPU memory (a device path). */
    static final ServerDelivery DELIVERY = new ServerDelivery() {
        @Override
        public Rpc rpc() {
            return Rpc.DO_EXCHANGE;
        }

        @Override
        public LoaderOptions options(LoaderOptions o) {
            if (o.path() == ReadPath.HOST) {
                throw new IllegalArgumentException("delivery CUDA_IPC needs batches in GPU memory, but path HOST was asked for: "
                        + "ask for HOST delivery or a device path (AUTO, BOUNCE, GDS, MAPPED)");
            }
            return o;
        }

        @Override
        public String refusal(GdsLoader l) {
            return l.pathTaken().onDevice() ? null : "delivery CUDA_IPC needs batches in GPU memory, but the loader took the "
                    + l.pathTaken() + " path (" + l.pathReason() + "): ask for HOST delivery or a device path";
        }

        @Override
        public Schema schema(GdsLoader loader) {
            return BatchSchema.ipc();
        }

        @Override
        public void serve(Session session, FlightStream fromClient, ServerStreamListener toClient, BooleanSupplier closing)
                throws InterruptedException {
            new IpcExchange(session, fromClient, toClient, closing).run();
        }

        @Override
        public boolean parksAfterEpoch() {
            return false; // the exchange streams the client's next epochs itself ({"next": E+1})
        }
    };

    private final Session session;
    private final FlightStream reader;
    private final ServerStreamListener writer;
    private final BooleanSupplier closing;
    private final Object monitor = new Object();
    /** Batches lent to the client by id; guarded by {@link #monitor}. */
    private final Map<Long, Batch> lent = new LinkedHashMap<>();
    private final IdentityHashMap<DeviceBuffer, String> handles = new IdentityHashMap<>();
    /** Interprocess events of lent batches, by id; guarded by {@link #monitor}. */
    private final Map<Long, IpcEvents.Event> lentEvents = new LinkedHashMap<>();
    /** The client's release events: batches released after the client's work on its stream. */
    private final ReleaseEvents releases;
    /** Null where the driver refuses interprocess events: then each batch is synchronized before it is sent. */
    private IpcEvents events;
    private volatile Throwable readerFailure;
    private volatile boolean readerDone;
    /** The epoch a client's {@code {"next": E}} asked for, or -1; guarded by {@link #monitor}. */
    private long requestedEpoch = -1;
    /** Set when {@link #run()} has ended: the reader thread then ignores what it reads. */
    private volatile boolean finished;

    IpcExchange(Session session, FlightStream reader, ServerStreamListener writer, BooleanSupplier closing) {
        this.session = session;
        this.reader = reader;
        this.writer = writer;
        this.closing = closing;
        this.releases = new ReleaseEvents(session.loader().options().device());
    }

    /**
     * Sends the epoch, completes the stream, waits for the client's last releases; closes every batch on every path.
     *
     * @throws InterruptedException if interrupted waiting for a slot or the last releases
     */
    void run() throws InterruptedException {
        GdsLoader loader = session.loader();
        BufferAllocator a = session.arrow();
        int device = loader.options().device();
        CudaDevice.makeCurrent(device);
        try {
            events = IpcEvents.create(loader.slots());
        } catch (RuntimeException e) {
            LOG.log(Level.INFO, "gdsloader: session " + session.id() + ": no interprocess CUDA events (" + e.getMessage()
                    + "); each batch is synchronized before it is sent, \"event\": null");
            events = null;
        }
        Thread.ofPlatform().daemon().name("gdsloader-ipc-releases-" + session.id()).start(this::readReleases);
        try (VectorSchemaRoot root = VectorSchemaRoot.create(BatchSchema.ipc(), a)) {
            writer.start(root);
            BigIntVector records = (BigIntVector) root.getVector(Protocol.RECORD_COLUMN);
            BitVector padding = (BitVector) root.getVector(Protocol.PADDING_COLUMN);
            Iterator<Batch> epoch = loader.iterator();
            long epochNumber = session.request().epoch();
            long nextId = 0;
            long epochFirstId = 0;
            while (true) {
                awaitSlot(loader.slots());
                HostStream.awaitReady(writer, closing);
                boolean more = epoch.hasNext();
                if (!more) {
                    // The end, as a metadata-only message; the call stays open: gRPC drops what a client sends after
                    // the server completed, so the releases still due and the client's unmapping must come first (CUDA
                    // forbids freeing memory another process still maps). The client then half-closes (every batch
                    // released, the slots unmapped), or asks for the next epoch on this exchange (same loader, same
                    // buffers and handles: no new session, registration or mapping per epoch).
                    writer.putMetadata(Messages.utf8(a, Messages.end(epochNumber, nextId - epochFirstId)));
                    long next = awaitClientDoneOrNext();
                    if (next < 0) {
                        break;
                    }
                    if (next != epochNumber + 1) {
                        throw new IllegalArgumentException("client asked for epoch " + next + " after epoch " + epochNumber
                                + ": an exchange continues with the next epoch only, {\"next\": " + (epochNumber + 1) + "}");
                    }
                    epochNumber = next;
                    epochFirstId = nextId;
                    epoch = loader.iterator();
                    continue;
                }
                Batch b = epoch.next();
                long id = nextId++;
                ObjectNode meta;
                IpcEvents.Event event = null;
                try {
                    CudaEvent ready = b.readyEvent().orElse(null);
                    if (ready != null && events != null) {
                        event = events.record(ready); // stream-ordered: the client's stream waits on it
                    } else if (ready != null) {
                        ready.synchronize(); // the batch is complete on the device when the client gets it
                    }
                    meta = metadata(b, id, loader, event);
                    int rows = b.records();
                    records.allocateNew(rows);
                    padding.allocateNew(rows);
                    for (int i = 0; i < rows; i++) {
                        records.set(i, session.globalRecord(b.recordIndex(i)));
                        padding.set(i, b.isPadding(i) ? 1 : 0);
                    }
                    root.setRowCount(rows);
                } catch (RuntimeException | Error e) {
                    if (event != null) {
                        events.giveBack(event);
                    }
                    b.close();
                    throw e;
                }
                synchronized (monitor) {
                    lent.put(id, b);
                    if (event != null) {
                        lentEvents.put(id, event);
                    }
                }
                writer.putNext(Messages.utf8(a, meta.toString()));
                root.clear();
            }
            if (!writer.isCancelled()) {
                writer.completed();
            }
        } finally {
            // the reader thread ends when the call does (Flight completes the server's reader then; a server-side
            // reader cannot be cancelled); a release it reads after this finds nothing lent and is ignored
            finished = true;
            synchronized (monitor) {
                for (Batch b : lent.values()) {
                    b.close();
                }
                lent.clear();
                lentEvents.clear();
            }
            try {
                releases.close(); // the releases it ordered have run: the loader is freed after this
            } finally {
                handles.clear();
                if (events != null) {
                    events.close(); // waits for its stream: no record is pending when the events go
                }
            }
        }
    }

    private ObjectNode metadata(Batch b, long id, GdsLoader loader, IpcEvents.Event event) {
        ObjectNode n = Protocol.JSON.createObjectNode();
        n.put("id", id);
        n.put("epoch", b.epoch());
        n.put("index", b.index());
        n.put("padding", b.paddingCount());
        n.set("state", Messages.tree(loader.state().toJson()));
        ArrayNode cols = n.putArray("columns");
        for (ColumnView c : b.columns()) {
            DeviceBuffer buf = c.deviceBuffer().orElseThrow(() -> new IllegalStateException(
                    "column '" + c.name() + "' of " + b.describe() + " is not in a device buffer"));
            ObjectNode col = cols.addObject();
            col.put("name", c.name());
            col.put("dtype", c.dtype().name());
            ArrayNode shape = col.putArray("shape");
            for (long d : c.shape()) {
                shape.add(d);
            }
            col.put("bytes", c.bytes());
            col.put("offset", c.deviceOffset());
            col.put("ipcHandle", handles.computeIfAbsent(buf, IpcExchange::memHandle));
            col.put("device", buf.device());
        }
        if (event == null) {
            n.putNull("event");
        } else {
            n.put("event", event.handle());
        }
        return n;
    }

    /** @return {@code buf}'s CUDA IPC memory handle, base64 (the metadata's {@code "ipcHandle"}) */
    private static String memHandle(DeviceBuffer buf) {
        return java.util.Base64.getEncoder().encodeToString(CudaIpc.memHandle(buf));
    }

    private void wake() {
        synchronized (monitor) {
            monitor.notifyAll();
        }
    }

    /** Waits until fewer than {@code slots} batches are lent; throws if the client went away or the server closes. */
    private void awaitSlot(int slots) throws InterruptedException {
        synchronized (monitor) {
            while (lent.size() >= slots) {
                checkAlive();
                monitor.wait(50);
            }
        }
    }

    /**
     * Waits until the client half-closed (its side done: every batch released, the slots unmapped) or went away, or
     * asked for another epoch; throws if the server closes first or the client broke the protocol.
     *
     * @return the epoch the client asked for ({@code {"next": E}}), or -1 if it half-closed or went away
     */
    private long awaitClientDoneOrNext() throws InterruptedException {
        long next;
        synchronized (monitor) {
            while (!readerDone && requestedEpoch < 0 && !writer.isCancelled()) {
                if (closing.getAsBoolean()) {
                    throw Errors.shuttingDown();
                }
                monitor.wait(50);
            }
            next = requestedEpoch;
            requestedEpoch = -1;
        }
        Throwable t = readerFailure;
        if (t != null) {
            throw CallStatus.INVALID_ARGUMENT.withDescription(String.valueOf(t.getMessage())).toRuntimeException();
        }
        return readerDone || writer.isCancelled() ? -1 : next;
    }

    private void checkAlive() {
        if (writer.isCancelled()) {
            throw CallStatus.CANCELLED.withDescription("the client cancelled the exchange").toRuntimeException();
        }
        if (closing.getAsBoolean()) {
            throw Errors.shuttingDown();
        }
        Throwable t = readerFailure;
        if (t != null) {
            throw CallStatus.INVALID_ARGUMENT.withDescription(String.valueOf(t.getMessage())).toRuntimeException();
        }
        if (readerDone) {
            throw CallStatus.CANCELLED.withDescription("the client ended its side of the exchange with batches lent")
                    .toRuntimeException();
        }
    }

    /**
     * The reader thread: each client message {@code {"release": ID}} closes that lent batch; with
     * {@code "event": HANDLE} the batch is released after the client's event instead ({@link ReleaseEvents}).
     */
    private void readReleases() {
        try {
            while (reader.next()) {
                ArrowBuf m = reader.getLatestMetadata();
                if (m == null) {
                    continue;
                }
                byte[] bytes = new byte[(int) m.readableBytes()];
                m.getBytes(m.readerIndex(), bytes);
                JsonNode n = Protocol.JSON.readTree(new String(bytes, StandardCharsets.UTF_8));
                JsonNode next = n == null || n.size() != 1 ? null : n.get(Protocol.NEXT_KEY);
                if (next != null && next.isIntegralNumber() && next.canConvertToLong()) {
                    synchronized (monitor) {
                        requestedEpoch = next.longValue();
                        monitor.notifyAll();
                    }
                    continue;
                }
                JsonNode id = n == null ? null : n.get(Messages.RELEASE_KEY);
                JsonNode clientEvent = n == null ? null : n.get(Messages.EVENT_KEY);
                boolean afterEvent = clientEvent != null && clientEvent.isTextual();
                if (id == null || !id.isIntegralNumber() || n.size() != (afterEvent ? 2 : 1)) {
                    throw new IllegalArgumentException("client message must be {\"release\": BATCH_ID} (or {\"release\": "
                            + "BATCH_ID, \"event\": HANDLE}) or, after an end message, {\"next\": EPOCH}, got "
                            + new String(bytes, StandardCharsets.UTF_8));
                }
                Batch b;
                IpcEvents.Event event;
                synchronized (monitor) {
                    b = lent.remove(id.longValue());
                    event = lentEvents.remove(id.longValue());
                    monitor.notifyAll();
                }
                if (event != null) {
                    events.giveBack(event);
                }
                if (b == null && finished) {
                    continue; // the exchange ended: its batches were closed
                }
                if (b == null) {
                    throw new IllegalArgumentException("release of batch id " + id + ", which this exchange has not lent "
                            + "(or was released already)");
                }
                if (afterEvent) {
                    releases.release(b, clientEvent.asText());
                } else {
                    b.close();
                }
            }
        } catch (Throwable t) {
            if (!writer.isCancelled() && !closing.getAsBoolean()) {
                LOG.log(Level.FINE, "gdsloader: session " + session.id() + ": reading releases failed", t);
                readerFailure = t;
            }
        } finally {
            readerDone = true;
            wake();
        }
    }
}
