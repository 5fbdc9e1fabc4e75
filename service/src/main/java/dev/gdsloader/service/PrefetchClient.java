package dev.gdsloader.service;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.LoaderState;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Shuffle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightClient.ExchangeReaderWriter;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * A blocking Arrow Flight client of a {@link PrefetchServer}, for training loops: one request (dataset, loader options,
 * delivery), iterated epoch by epoch; each epoch is one Flight stream ({@code DoGet} for HOST delivery,
 * {@code DoExchange} for CUDA_IPC), through which gRPC keeps several batches in flight (its flow-control window).
 *
 * <pre>{@code
 * try (PrefetchClient client = PrefetchClient.builder("127.0.0.1", port).dataset("train").batchSize(256)
 *         .shuffle(Shuffle.GLOBAL, 42).ranks(rank, world, Partition.EXACT_ONCE).open()) {
 *     for (RemoteBatch b : client) {            // one epoch per for loop
 *         try (b) {
 *             ByteBuffer images = b.column("images").hostBuffer();
 *             // ... train ...
 *         }
 *     }
 * }
 * }</pre>
 *
 * <p>Faults: every wait has a deadline ({@link Builder#timeout}: the info call's gRPC deadline, and for streams the
 * longest wait for the next batch, after which the stream is cancelled). Opening retries an UNAVAILABLE server (not
 * listening yet, or shutting down) every 200 ms for up to {@link Builder#reconnectTimeout}, then fails naming the server,
 * the cause and how long it retried. The client remembers the loader state of the
 * last batch it handed out; when a stream breaks (UNAVAILABLE, INTERNAL or UNKNOWN: a server killed or shutting
 * down), it reconnects, retrying for up to {@link Builder#reconnectTimeout}, and resumes right after that batch, so
 * each record of the epoch is handed out exactly once across the restart. Refusals (INVALID_ARGUMENT, NOT_FOUND,
 * PERMISSION_DENIED, RESOURCE_EXHAUSTED) are not retried. Errors are {@link PrefetchServiceException}s naming the
 * server and its one-line reason, with the Flight status code.
 *
 * <p>Several servers ({@link Cluster}, service/README.md "Several machines"): when the server asked answers
 * {@code GetFlightInfo} with one endpoint per part, each epoch reads those endpoints in their order (part 0 first),
 * each from its own server, resuming per endpoint after a break as above; a part whose server stays gone ends the
 * epoch with a {@link PrefetchServiceException} naming that server's {@code host:port} and the part (its index and
 * global record range). {@link #lastState()} is then a state of the current part's stream.
 *
 * <p>Ownership: the client owns its {@link FlightClient} (gRPC's threads are daemons, so a process that fails without
 * closing the client still exits), its Arrow allocator, its deadline timer (a daemon thread) and, per CUDA_IPC stream,
 * its mappings of the server's slot buffers and the server's interprocess ready events (opened once per handle, closed
 * when the epoch's batches are all released, before the stream completes; a batch whose metadata names an event is
 * handed out once that event has completed; CUDA cannot open a handle in the process that created it, so the client
 * must be another process than the server for {@link Delivery#CUDA_IPC}). Each batch handed out is owned by the
 * caller until closed; {@link #close()} closes those still held. Not thread-safe: one consumer thread.
 */
public final class PrefetchClient implements Iterable<RemoteBatch>, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PrefetchClient.class.getName());

    /** The default HTTP/2 flow-control window of a client's connections, bytes ({@link Builder#flowControlWindow}). */
    public static final int DEFAULT_WINDOW = 16 << 20;

    private final String peer;
    private final Location location;
    private final String token;
    private final java.nio.file.Path tlsRoots;
    private final Request request;
    private final long timeoutMillis;
    private final long reconnectMillis;
    private final int window;
    private final int device;
    private final BufferAllocator allocator = new RootAllocator();
    private final ScheduledExecutorService timer;
    private final Set<RemoteBatch> held = new LinkedHashSet<>();
    private Connection flight;
    private JsonNode info;
    /** What each epoch reads, in order: one endpoint, or a cluster's parts (from GetFlightInfo). */
    private Endpoints endpoints;
    private long nextEpoch;
    private Epoch current;
    private boolean closed;
    /** Per-batch latencies of the CUDA_IPC path ({@link #ipcTrace()}); off for HOST delivery. */
    private final IpcTrace trace;
    /** Stages of {@link #trace}. */
    static final int TRACE_NEXT = 0;
    static final int TRACE_DECODE = 1;
    static final int TRACE_EVENT = 2;
    static final int TRACE_SYNC = 3;
    static final int TRACE_SEND = 4;

    private PrefetchClient(Builder b) {
        this.peer = b.host + ":" + b.port;
        this.location = b.tlsRoots != null ? Location.forGrpcTls(b.host, b.port) : Location.forGrpcInsecure(b.host, b.port);
        this.token = b.token;
        this.tlsRoots = b.tlsRoots;
        this.request = new Request(b.dataset, b.options, b.delivery, 0, null);
        this.timeoutMillis = b.timeout.toMillis();
        this.reconnectMillis = b.reconnectTimeout.toMillis();
        this.window = b.window;
        this.device = b.device;
        this.trace = b.delivery == Delivery.CUDA_IPC
                ? IpcTrace.create("client", "stream.next", "metadata->batch", "cudaEventSynchronize",
                        "release:streamSynchronize", "release:send")
                : IpcTrace.of(false, "client", 0, "off");
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon()
                .name("gdsloader-client-deadline").unstarted(r));
        this.flight = connect();
    }

    /** @return a new connection to the server this client was built for (see {@link #connectTo}) */
    private Connection connect() {
        return connectTo(location);
    }

    /**
     * @param host server host (loopback for {@link Delivery#CUDA_IPC})
     * @param port server port
     * @return a builder with defaults: dataset ".", the loader options of {@link LoaderOptions#defaults()} (no
     *     shuffle, rank 0 of 1, EXACT_ONCE, path AUTO, prefetch depth 4, ...), HOST delivery, 60 s timeout, 60 s of
     *     reconnecting; batch size must be set
     */
    public static Builder builder(String host, int port) {
        return new Builder(host, port);
    }

    /** @return the delivery of this client's streams */
    public Delivery delivery() {
        return request.delivery();
    }

    /** @return the read path the server's loader took, e.g. {@code HOST}, {@code BOUNCE}, {@code GDS} */
    public String pathTaken() {
        return info.path("pathTaken").asText();
    }

    /** @return batches per epoch on this rank */
    public int batchesPerEpoch() {
        return info.path("batchesPerEpoch").asInt();
    }

    /**
     * The per-batch latency trace of this client's CUDA_IPC path: on when the client was opened with
     * {@code -D}{@value IpcTrace#PROPERTY}{@code =true} and {@link Delivery#CUDA_IPC}, else off (records nothing).
     * Its stages, in order: {@code stream.next} (blocked waiting for the batch's message), {@code metadata->batch}
     * (parsing the metadata, building the batch, mapping new handles), {@code cudaEventSynchronize} (waiting for the server's ready event),
     * {@code release:streamSynchronize} and {@code release:send} ({@link RemoteBatch#release(dev.gdsloader.cuda.CudaStream)}).
     * Recorded on the thread reading the client; read it ({@link IpcTrace#summary}, {@link IpcTrace#reset}) there.
     *
     * @return the trace, owned by this client
     */
    public IpcTrace ipcTrace() {
        return trace;
    }

    /** @return slots the server keeps for a stream of this client: hold fewer batches than this (CUDA_IPC) */
    public int slots() {
        return info.path("slots").asInt();
    }

    /**
     * @return the loader state after the last batch handed out (resume a later client from it with
     *     {@link Builder#resumeFrom}; with a cluster it is a state of the current part's stream, which
     *     {@code resumeFrom} refuses), or null before the first (of the epoch's current part)
     */
    public LoaderState lastState() {
        return current == null ? null : current.last();
    }

    /**
     * Starts the next epoch (the first call: epoch 0, or the epoch of {@link Builder#resumeFrom}'s state); its stream
     * opens at the first {@code hasNext()}.
     *
     * @return an iterator over the epoch's batches
     * @throws IllegalStateException if the client is closed or the previous epoch was not iterated to its end
     */
    @Override
    public Iterator<RemoteBatch> iterator() {
        checkOpen();
        if (current != null && !current.ended) {
            throw new IllegalStateException("the previous epoch was not finished: iterate it to its end first");
        }
        LoaderState resume = current == null ? resumeFrom : null;
        current = new Epoch(resume != null ? resume.epoch() : nextEpoch, resume);
        nextEpoch = current.epoch + 1;
        return current;
    }

    private LoaderState resumeFrom;
    /**
     * A CUDA_IPC exchange whose epoch ended ({@link #parkedEpoch}) and that stays open to stream the next epoch
     * ({@code {"next": E+1}}: same server session, buffers and handles); finished when not continued.
     */
    private IpcStream parked;
    private long parkedEpoch;

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("client of " + peer + " is closed");
        }
    }

    /** One epoch's stream, reopened after its last batch's state when it breaks. */
    private final class Epoch implements Iterator<RemoteBatch> {
        final long epoch;
        /** The endpoint being read ({@link Endpoints#targets()}); {@link #last()} is a state of its stream. */
        int target;
        /** The state to resume from when no batch of this stream came yet (a saved state), or null. */
        private LoaderState lastState;
        /** The last batch handed out: {@link #last()} is its state, parsed only when asked (a reconnect, a resume). */
        private RemoteBatch lastBatch;
        boolean ended;
        private Reader stream;
        private ExchangeReaderWriter exchange;
        private IpcStream ipc;
        private RemoteBatch fetched;

        Epoch(long epoch, LoaderState resume) {
            this.epoch = epoch;
            this.lastState = resume;
        }

        @Override
        public boolean hasNext() {
            checkOpen();
            if (fetched != null) {
                return true;
            }
            if (ended) {
                return false;
            }
            long reconnectDeadline = 0;
            FlightRuntimeException broke = null;
            while (true) {
                if (endpoints.targets().isEmpty()) { // a cluster's rank with no batches in any part
                    end();
                    return false;
                }
                Endpoints.Target t = endpoints.targets().get(target);
                try {
                    if (stream == null && last() != null && last().epoch() > epoch) {
                        // the state after the endpoint's last batch: nothing left there, no stream to open (an open
                        // stream is read to its end: a CUDA_IPC exchange's end message parks it for the next epoch)
                        if (!nextTarget()) {
                            return false;
                        }
                        continue;
                    }
                    if (stream == null) {
                        open(t);
                    }
                    long t0 = trace.start();
                    boolean more = nextWithDeadline(stream, t);
                    if (ipc != null) {
                        trace.stop(TRACE_NEXT, t0);
                    }
                    long t1 = trace.start();
                    JsonNode meta = more ? metadata(stream.metadata()) : null;
                    if (meta == null || meta.path(Protocol.END_KEY).asBoolean(false)) {
                        // the stream's end (DoGet), or the exchange's end message (CUDA_IPC, protocol 4)
                        if (meta != null && ipc != null) {
                            ipc.endReceived();
                            if (endpoints.targets().size() == 1) { // kept open for the next epoch
                                parked = ipc;
                                parkedEpoch = epoch;
                                ipc = null;
                                exchange = null;
                                stream = null;
                            }
                        }
                        if (!nextTarget()) {
                            return false;
                        }
                        reconnectDeadline = 0;
                        continue;
                    }
                    fetched = toBatch(meta);
                    if (ipc != null) {
                        // parsing the metadata, building the batch, mapping new handles; less the event wait
                        trace.record(TRACE_DECODE, trace.start() - t1 - lastEventWait);
                    }
                    lastBatch = fetched;
                    lastState = null;
                    return true;
                } catch (FlightRuntimeException e) {
                    dropStream();
                    if (!retryable(e.status().code())) {
                        throw new PrefetchServiceException(t.describe() + ": " + e.getMessage(), e, e.status().code());
                    }
                    long now = System.nanoTime();
                    if (broke == null) {
                        broke = e; // what ended the stream: said when reconnecting gives up (e.g. "server shutting down")
                    }
                    if (reconnectDeadline == 0) {
                        reconnectDeadline = now + TimeUnit.MILLISECONDS.toNanos(reconnectMillis);
                        LOG.log(Level.INFO, "gdsloader: stream from " + t.describe() + " broke (" + e.getMessage()
                                + "); reconnecting and resuming after " + (last() == null ? "the start" : last().toJson()));
                    } else if (now > reconnectDeadline) {
                        throw new PrefetchServiceException(t.describe() + ": " + gaveUp(broke, e)
                                + " (reconnecting for " + reconnectMillis + " ms did not help)", e, broke.status().code());
                    }
                    sleep(200);
                    endpoints.reconnect(t);
                }
            }
        }

        /** @return false (the epoch ended) if {@link #target} was the last endpoint, else moves on to the next one */
        private boolean nextTarget() {
            dropStream();
            if (target + 1 >= endpoints.targets().size()) {
                end();
                return false;
            }
            target++;
            lastState = null;
            lastBatch = null;
            return true;
        }

        private void open(Endpoints.Target t) {
            LoaderState last = last();
            Request r = last != null && last.epoch() == epoch ? request.resumingAfter(last) : request.forEpoch(epoch);
            Connection c = endpoints.client(t);
            if (request.delivery() == Delivery.HOST) {
                stream = new DoGetReader(c.channel(), t.ticket(r), allocator);
            } else {
                IpcStream p = parked;
                parked = null;
                if (p != null && last == null && epoch == parkedEpoch + 1 && p.continueWith(allocator, epoch)) {
                    ipc = p; // the same exchange streams this epoch
                    exchange = p.exchange;
                    stream = Reader.of(exchange.getReader());
                    return;
                }
                if (p != null) {
                    p.readerEnded(); // not continued: finished once its batches are back
                }
                exchange = c.flight().doExchange(FlightDescriptor.command(t.ticket(r)));
                stream = Reader.of(exchange.getReader());
                ipc = new IpcStream(exchange, timer, timeoutMillis);
            }
        }

        /** @return the state after the last batch handed out, or the state resumed from, or null */
        LoaderState last() {
            return lastBatch != null ? lastBatch.state() : lastState;
        }

        private RemoteBatch toBatch(JsonNode meta) {
            JsonNode s = meta.path("state");
            RemoteBatch b = request.delivery() == Delivery.HOST ? hostBatch(stream.root(), meta, s) : ipcBatch(meta, s, ipc);
            held.add(b);
            return b;
        }

        private void end() {
            ended = true;
            dropStream();
        }

        private void dropStream() {
            if (ipc != null) {
                ipc.readerEnded(); // the exchange completes once its batches are released
                ipc = null;
                exchange = null;
            } else if (stream != null) {
                closeQuietly(stream);
            }
            stream = null;
        }

        @Override
        public RemoteBatch next() {
            if (!hasNext()) {
                throw new NoSuchElementException("epoch " + epoch + " ended");
            }
            RemoteBatch b = fetched;
            fetched = null;
            return b;
        }
    }

    /**
     * What an epoch's stream is read through: a {@link DoGetReader} (HOST delivery) or the reader of a CUDA_IPC
     * exchange (Flight's {@link FlightStream}). One consumer thread; {@link #cancel} from any thread.
     */
    interface Reader extends AutoCloseable {
        /** @return false at the end of the stream; throws the call's error as a {@link FlightRuntimeException} */
        boolean next();

        /** @return the root holding the last batch */
        VectorSchemaRoot root();

        /** @return the last batch's app_metadata, or null */
        byte[] metadata();

        /**
         * Cancels the call: {@link #next()} throws CANCELLED. Any thread.
         *
         * @param why the reason
         */
        void cancel(String why);

        @Override
        void close();

        /** @return {@code s} as a reader */
        static Reader of(FlightStream s) {
            return new Reader() {
                @Override
                public boolean next() {
                    return s.next();
                }

                @Override
                public VectorSchemaRoot root() {
                    return s.getRoot();
                }

                @Override
                public byte[] metadata() {
                    ArrowBuf m = s.getLatestMetadata();
                    if (m == null) {
                        return null;
                    }
                    byte[] bytes = new byte[(int) m.readableBytes()];
                    m.getBytes(m.readerIndex(), bytes);
                    return bytes;
                }

                @Override
                public void cancel(String why) {
                    s.cancel(why, null);
                }

                @Override
                public void close() {
                    try {
                        s.close();
                    } catch (Exception e) {
                        LOG.log(Level.FINE, "gdsloader: closing a stream", e);
                    }
                }
            };
        }
    }

    /** {@code stream.next()} with the client's deadline: the stream is cancelled if nothing comes in time. */
    private boolean nextWithDeadline(Reader stream, Endpoints.Target t) {
        AtomicBoolean fired = new AtomicBoolean();
        ScheduledFuture<?> f = timer.schedule(() -> {
            fired.set(true);
            stream.cancel("no batch for " + timeoutMillis + " ms");
        }, timeoutMillis, TimeUnit.MILLISECONDS);
        try {
            return stream.next();
        } catch (FlightRuntimeException e) {
            if (fired.get()) {
                throw new PrefetchServiceException(t.describe() + " sent nothing for " + timeoutMillis + " ms", e,
                        FlightStatusCode.TIMED_OUT);
            }
            throw e;
        } finally {
            f.cancel(false);
        }
    }

    /**
     * @param first the failure that started the retries
     * @param last the last one
     * @return what retrying met, for the error thrown when it gives up: the first failure, then the last if it differs
     */
    @SuppressWarnings("ReferenceEquality") // the same exception object, not an equal one
    static String gaveUp(FlightRuntimeException first, FlightRuntimeException last) {
        return first == last ? withCause(last) : withCause(first) + "; then " + withCause(last);
    }

    /** @return the status message, with the transport's own reason when gRPC says only "io exception" */
    @SuppressWarnings("ReferenceEquality") // a cause chain ends where a cause is itself: the same object
    static String withCause(FlightRuntimeException e) {
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        String why = c == e ? null : c.getMessage();
        return why == null || why.isBlank() || e.getMessage().contains(why) ? e.getMessage() : e.getMessage() + ": " + why;
    }

    private static boolean retryable(FlightStatusCode c) {
        return c == FlightStatusCode.UNAVAILABLE || c == FlightStatusCode.INTERNAL || c == FlightStatusCode.UNKNOWN;
    }

    private PrefetchServiceException failure(FlightRuntimeException e) {
        return new PrefetchServiceException("prefetch server " + peer + ": " + e.getMessage(), e, e.status().code());
    }

    /**
     * @return a new connection to {@code at}, a server of this client's endpoints (owned by {@link #endpoints}), over
     *     TLS trusting {@code tlsRoots} and with the bearer token, where set, and this client's flow-control window
     */
    private Connection connectTo(Location at) {
        return Connection.open(allocator, at, tlsRoots, token, window);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PrefetchServiceException("interrupted while reconnecting", e, null);
        }
    }

    private static JsonNode metadata(byte[] bytes) {
        if (bytes == null) {
            throw new PrefetchServiceException("a batch came without its app_metadata", null, FlightStatusCode.INTERNAL);
        }
        try {
            return Protocol.JSON.readTree(new String(bytes, StandardCharsets.UTF_8));
        } catch (java.io.IOException e) {
            throw new PrefetchServiceException("a batch's app_metadata is not JSON: " + e.getMessage(), e, FlightStatusCode.INTERNAL);
        }
    }

    /** A host batch over the stream's current record batch: each column's data buffer retained (no copy but BOOL). */
    private RemoteBatch hostBatch(VectorSchemaRoot root, JsonNode meta, JsonNode state) {
        int rows = root.getRowCount();
        long[] records = new long[rows];
        BigIntVector rec = (BigIntVector) root.getVector(Protocol.RECORD_COLUMN);
        for (int i = 0; i < rows; i++) {
            records[i] = rec.get(i);
        }
        List<ArrowBuf> retained = new ArrayList<>();
        RemoteBatch b = new RemoteBatch(this, meta.path("epoch").asLong(), meta.path("index").asLong(), records,
                meta.path("padding").asInt(), Delivery.HOST, state, -1, retained);
        try {
            List<RemoteColumn> cols = new ArrayList<>();
            for (FieldVector v : root.getFieldVectors()) {
                Field f = v.getField();
                if (f.getName().equals(Protocol.RECORD_COLUMN) || f.getName().equals(Protocol.PADDING_COLUMN)) {
                    continue;
                }
                DType t = BatchSchema.dtype(f);
                long[] rs = BatchSchema.recordShape(f);
                long n = BatchSchema.elements(rs);
                long[] shape = new long[rs.length + 1];
                shape[0] = rows;
                System.arraycopy(rs, 0, shape, 1, rs.length);
                long bytes = rows * n * t.itemSize();
                FieldVector values = v instanceof FixedSizeListVector l ? l.getDataVector() : v;
                ByteBuffer host;
                if (t == DType.BOOL) {
                    BitVector bits = (BitVector) values;
                    byte[] out = new byte[Math.toIntExact(bytes)];
                    for (int i = 0; i < out.length; i++) {
                        out[i] = (byte) bits.get(i);
                    }
                    host = ByteBuffer.wrap(out);
                } else {
                    ArrowBuf data = values.getDataBuffer();
                    if (data.capacity() < bytes) {
                        throw new PrefetchServiceException("column '" + f.getName() + "' has " + data.capacity()
                                + " bytes, expected " + bytes, null, FlightStatusCode.INTERNAL);
                    }
                    data.getReferenceManager().retain();
                    retained.add(data);
                    host = bytes == 0 ? ByteBuffer.allocate(0) : data.nioBuffer(0, Math.toIntExact(bytes));
                }
                cols.add(new RemoteColumn(b, f.getName(), t, shape, bytes, host.asReadOnlyBuffer(), null, 0));
            }
            b.columns(cols);
        } catch (RuntimeException e) {
            b.close(); // releases the buffers retained so far
            throw e;
        }
        return b;
    }

    private RemoteBatch ipcBatch(JsonNode meta, JsonNode state, IpcStream ipc) {
        VectorSchemaRoot root = ipc.exchange.getReader().getRoot();
        int rows = root.getRowCount();
        long[] records = new long[rows];
        BigIntVector rec = (BigIntVector) root.getVector(Protocol.RECORD_COLUMN);
        for (int i = 0; i < rows; i++) {
            records[i] = rec.get(i);
        }
        long id = meta.path("id").asLong();
        RemoteBatch b = new RemoteBatch(this, meta.path("epoch").asLong(), meta.path("index").asLong(), records,
                meta.path("padding").asInt(), Delivery.CUDA_IPC, state, id, List.of());
        b.ipc(ipc);
        ipc.outstanding++;
        try {
            mapColumns(b, meta, ipc);
        } catch (RuntimeException e) {
            b.close(); // released to the server: the exchange can still complete
            throw e;
        }
        return b;
    }

    /** Nanoseconds the last batch's {@link #mapColumns} waited for its event (tracing only). */
    private long lastEventWait;

    /** Maps each column's slot buffer (once per handle) and waits for the server's ready event, if it sent one. */
    private void mapColumns(RemoteBatch b, JsonNode meta, IpcStream ipc) {
        List<RemoteColumn> cols = new ArrayList<>();
        for (JsonNode c : meta.path("columns")) {
            long[] shape = new long[c.path("shape").size()];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = c.path("shape").get(i).asLong();
            }
            String handle = c.path("ipcHandle").asText();
            CudaIpc.DevicePointer p = ipc.mappings.computeIfAbsent(handle, h -> {
                CudaDevice.makeCurrent(device);
                return CudaIpc.open(h);
            });
            cols.add(new RemoteColumn(b, c.path("name").asText(), DType.valueOf(c.path("dtype").asText()), shape,
                    c.path("bytes").asLong(), null, p, c.path("offset").asLong()));
        }
        b.columns(cols);
        JsonNode event = meta.get("event");
        if (event != null && !event.isNull()) {
            jcuda.runtime.cudaEvent_t ev = ipc.events.computeIfAbsent(event.asText(), h -> {
                CudaDevice.makeCurrent(device);
                return CudaIpc.openEvent(h);
            });
            // the batch is ready on the device once the server's event has completed: wait for it here, so that every
            // use of the mapping (any stream, cudaMemcpy) sees the data
            long t = trace.start();
            dev.gdsloader.cuda.Cuda.check(jcuda.runtime.JCuda.cudaEventSynchronize(ev), "cudaEventSynchronize(server's ready event)");
            lastEventWait = trace.start() - t;
            trace.record(TRACE_EVENT, lastEventWait);
        } else {
            lastEventWait = 0;
        }
    }

    /**
     * The client side of one DoExchange (one epoch of one server session): releases go out on its writer; once the
     * server's end message came and every batch is back it unmaps the session's slot buffers and destroys its events,
     * and only then half-closes and reads to the server's completion (the server frees the buffers after that: CUDA
     * forbids freeing memory another process still maps).
     */
    static final class IpcStream {
        final ExchangeReaderWriter exchange;
        /** Mappings of the session's slot buffers, opened once per handle. */
        final Map<String, CudaIpc.DevicePointer> mappings = new HashMap<>();
        /** The session's interprocess ready events, opened once per handle. */
        final Map<String, jcuda.runtime.cudaEvent_t> events = new HashMap<>();
        int outstanding;
        private boolean readerEnded;
        private boolean endReceived;
        private boolean done;

        private final ScheduledExecutorService timer;
        private final long timeoutMillis;

        IpcStream(ExchangeReaderWriter exchange, ScheduledExecutorService timer, long timeoutMillis) {
            this.exchange = exchange;
            this.timer = timer;
            this.timeoutMillis = timeoutMillis;
        }

        void release(BufferAllocator a, long id) {
            outstanding--;
            if (!done) {
                try {
                    exchange.getWriter().putMetadata(HostStream.utf8(a, "{\"release\":" + id + "}"));
                } catch (RuntimeException e) {
                    LOG.log(Level.FINE, "gdsloader: release of batch " + id + " not sent", e);
                }
            }
            finishIfDone();
        }

        /** The server's end message came: on finishing, read to the server's completion instead of cancelling. */
        void endReceived() {
            endReceived = true;
        }

        /**
         * Asks the server for {@code epoch} on this exchange ({@code {"next": epoch}}) after its end message.
         *
         * @return false (nothing sent; finish it and open another) if the exchange is done or the send fails
         */
        boolean continueWith(BufferAllocator a, long epoch) {
            if (done || !endReceived) {
                return false;
            }
            try {
                exchange.getWriter().putMetadata(HostStream.utf8(a, "{\"" + Protocol.NEXT_KEY + "\":" + epoch + "}"));
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "gdsloader: continuing an exchange with epoch " + epoch + " failed", e);
                return false;
            }
            endReceived = false;
            return true;
        }

        void readerEnded() {
            readerEnded = true;
            finishIfDone();
        }

        private void finishIfDone() {
            if (readerEnded && outstanding == 0 && !done) {
                done = true;
                for (CudaIpc.DevicePointer p : mappings.values()) {
                    try {
                        CudaIpc.close(p);
                    } catch (RuntimeException e) {
                        LOG.log(Level.WARNING, "gdsloader: cudaIpcCloseMemHandle failed", e);
                    }
                }
                mappings.clear();
                for (jcuda.runtime.cudaEvent_t ev : events.values()) {
                    jcuda.runtime.JCuda.cudaEventDestroy(ev);
                }
                events.clear();
                try {
                    exchange.getWriter().completed(); // after the end message, the server completes once it sees this
                    if (endReceived) {
                        // read to the server's completion (closing earlier would cancel the call), within the deadline;
                        // an exchange abandoned before its end is cancelled by the close below instead
                        FlightStream r = exchange.getReader();
                        ScheduledFuture<?> f = timer.schedule(() -> r.cancel("no completion for " + timeoutMillis + " ms",
                                null), timeoutMillis, TimeUnit.MILLISECONDS);
                        try {
                            while (r.next()) {
                                LOG.log(Level.FINE, "gdsloader: a message after the exchange's end message, ignored");
                            }
                        } finally {
                            f.cancel(false);
                        }
                    }
                } catch (RuntimeException e) {
                    LOG.log(Level.FINE, "gdsloader: finishing an exchange", e);
                } finally {
                    closeQuietly(exchange);
                }
            }
        }
    }

    void released(RemoteBatch b) {
        held.remove(b);
    }

    BufferAllocator allocator() {
        return allocator;
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.log(Level.FINE, "gdsloader: closing a stream", e);
        }
    }

    /**
     * {@code GetFlightInfo}, retried as a broken stream reconnects: an UNAVAILABLE server (not listening yet, or shutting
     * down: GOAWAY) is asked again on a new connection every 200 ms for up to {@link #reconnectMillis}; refusals are not
     * retried.
     */
    private void fetchInfo() {
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(reconnectMillis);
        FlightRuntimeException first = null;
        while (true) {
            try {
                FlightInfo fi = flight.flight().getInfo(FlightDescriptor.command(request.forEpoch(0).toBytes()),
                        CallOptions.timeout(timeoutMillis, TimeUnit.MILLISECONDS));
                byte[] m = fi.getAppMetadata();
                info = Protocol.JSON.readTree(m == null ? "{}" : new String(m, StandardCharsets.UTF_8));
                endpoints = Endpoints.of(fi, location, this::connectTo);
                return;
            } catch (FlightRuntimeException e) {
                if (e.status().code() != FlightStatusCode.UNAVAILABLE) {
                    throw failure(e);
                }
                if (first == null) {
                    first = e;
                    LOG.log(Level.INFO, "gdsloader: prefetch server " + peer + " unavailable (" + e.getMessage()
                            + "); retrying for up to " + reconnectMillis + " ms");
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new PrefetchServiceException("prefetch server " + peer + " unavailable: " + gaveUp(first, e)
                            + " (retried for " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms)", e,
                            e.status().code());
                }
                sleep(Math.min(200, Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
                flight.close(); // a new channel: gRPC's own would wait out its reconnect backoff (1 s and more)
                flight = connect();
            } catch (java.io.IOException e) {
                throw new PrefetchServiceException("prefetch server " + peer + " sent flight info that is not JSON", e, null);
            }
        }
    }

    /**
     * Closes the stream in progress, every batch still held (their memory becomes invalid), the CUDA IPC mappings, the
     * Flight client and the allocator. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (current != null && current.fetched != null) {
            current.fetched.close();
            current.fetched = null;
        }
        for (RemoteBatch b : List.copyOf(held)) {
            b.close();
        }
        if (current != null) {
            current.dropStream();
        }
        if (parked != null) {
            parked.readerEnded(); // every batch is back: unmaps, half-closes, reads to the server's completion
            parked = null;
        }
        closed = true;
        RuntimeException first = null;
        if (endpoints != null) {
            endpoints.close();
        }
        flight.close();
        timer.shutdownNow();
        try {
            allocator.close();
        } catch (RuntimeException e) {
            first = first == null ? e : first;
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Configures and opens a {@link PrefetchClient}: the server-side loader's settings are one {@link LoaderOptions}
     * (sent as JSON in the request), which the loader setters here replace with checked copies, so an invalid value
     * throws {@link IllegalArgumentException} at the setter naming the option. Not thread-safe.
     */
    public static final class Builder {
        private final String host;
        private final int port;
        private String dataset = ".";
        private LoaderOptions options = LoaderOptions.defaults();
        private Delivery delivery = Delivery.HOST;
        private int device;
        private Duration timeout = Duration.ofSeconds(60);
        private Duration reconnectTimeout = Duration.ofSeconds(60);
        private LoaderState resume;
        private String token;
        private java.nio.file.Path tlsRoots;
        private int window = DEFAULT_WINDOW;

        private Builder(String host, int port) {
            this.host = Objects.requireNonNull(host, "host");
            this.port = port;
        }

        /**
         * @param dir dataset directory (or shard), relative to the server's dataset root
         * @return this
         */
        public Builder dataset(String dir) {
            this.dataset = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * Replaces every loader option at once; the setters below change single fields of them.
         *
         * @param options the server-side loader's options
         * @return this
         */
        public Builder options(LoaderOptions options) {
            this.options = Objects.requireNonNull(options, "options");
            return this;
        }

        /**
         * @param records records per batch, &gt; 0 (0, not set, is refused by the server)
         * @return this
         * @throws IllegalArgumentException if negative
         */
        public Builder batchSize(int records) {
            options = options.withBatchSize(records);
            return this;
        }

        /**
         * @param names columns to load; none for all
         * @return this
         */
        public Builder columns(String... names) {
            options = options.withColumns(List.of(names));
            return this;
        }

        /**
         * @param shuffle record order
         * @param seed shuffle seed; the order is a pure function of (seed, epoch, rank, world size)
         * @return this
         */
        public Builder shuffle(Shuffle shuffle, long seed) {
            options = options.withSampler(options.sampler().withShuffle(shuffle, seed));
            return this;
        }

        /**
         * @param rank this client's rank, 0..worldSize-1
         * @param worldSize ranks in all
         * @param partition how an uneven split is handled
         * @return this
         * @throws IllegalArgumentException naming {@code rank} or {@code worldSize} if out of range
         */
        public Builder ranks(int rank, int worldSize, Partition partition) {
            options = options.withSampler(options.sampler().withRanks(rank, worldSize, partition));
            return this;
        }

        /**
         * @param path the server loader's read path (HOST delivery: HOST or AUTO, which reads through host memory)
         * @return this
         */
        public Builder path(ReadPath path) {
            options = options.withPath(path);
            return this;
        }

        /**
         * @param slots batches the server keeps ready, 1..64 (default 4)
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder prefetchDepth(int slots) {
            options = options.withPrefetchDepth(slots);
            return this;
        }

        /**
         * @param drop drop the last, short batch of each epoch
         * @return this
         */
        public Builder dropLast(boolean drop) {
            options = options.withSampler(options.sampler().withDropLast(drop));
            return this;
        }

        /**
         * @param delivery how batches reach this process
         * @return this
         */
        public Builder delivery(Delivery delivery) {
            this.delivery = Objects.requireNonNull(delivery, "delivery");
            return this;
        }

        /**
         * @param ordinal CUDA device of this process on which IPC handles are opened (the server's GPU as this
         *     process numbers it); not the server loader's device, which is {@link LoaderOptions#device()}
         * @return this
         */
        public Builder device(int ordinal) {
            this.device = ordinal;
            return this;
        }

        /**
         * @param timeout longest wait for the server: the deadline of the info call, and of each wait for a batch
         * @return this
         */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * @param timeout how long a broken stream, or an unavailable server at {@link #open()}, is retried (reconnecting
         *     every 200 ms) before its error is thrown
         * @return this
         */
        public Builder reconnectTimeout(Duration timeout) {
            this.reconnectTimeout = Objects.requireNonNull(timeout, "reconnectTimeout");
            return this;
        }

        /**
         * @param state a state from {@link PrefetchClient#lastState()} (or a batch's {@link RemoteBatch#state()}): the
         *     first epoch iterated is the state's, starting right after its batch
         * @return this
         */
        public Builder resumeFrom(LoaderState state) {
            this.resume = state;
            return this;
        }

        /**
         * @param token the server's bearer token ({@link PrefetchServer.Builder#token}), sent on every call as
         *     {@code Authorization: Bearer TOKEN}; null for none
         * @return this
         * @throws IllegalArgumentException if not a valid token ({@link BearerAuth#check}; the message does not quote it)
         */
        public Builder token(String token) {
            this.token = token == null ? null : BearerAuth.check(token);
            return this;
        }

        /**
         * The HTTP/2 flow-control window of this client's connections (each stream's and each connection's): how many
         * bytes a server may send beyond what this client has taken in. gRPC's default is 1 MiB, auto-tuned from a
         * bandwidth-delay estimate (which a link with a tiny round trip keeps small); with a small window the server
         * waits for a WINDOW_UPDATE round trip between the two event loops every half window. A larger fixed window keeps the server writing; it is
         * memory this client may have to buffer per stream.
         *
         * @param bytes the window, 64 KiB .. 1 GiB (default {@link #DEFAULT_WINDOW})
         * @return this
         * @throws IllegalArgumentException if out of range
         */
        public Builder flowControlWindow(int bytes) {
            if (bytes < (64 << 10) || bytes > (1 << 30)) {
                throw new IllegalArgumentException("flowControlWindow: " + bytes + " bytes, expected 64 KiB .. 1 GiB");
            }
            this.window = bytes;
            return this;
        }

        /**
         * Connects over TLS ({@code grpc+tls}), verifying the server's certificate (and host name) against these.
         *
         * @param trustedCertificates PEM file of the certificates to trust: the server's own (self-signed) or its CA
         * @return this
         */
        public Builder tls(java.nio.file.Path trustedCertificates) {
            this.tlsRoots = Objects.requireNonNull(trustedCertificates, "trustedCertificates");
            return this;
        }

        /**
         * Connects and asks the server about the request ({@code GetFlightInfo}), which checks it as a stream would.
         *
         * @return the client, owned by the caller
         * @throws PrefetchServiceException naming what was wrong: the connection (a server UNAVAILABLE for all of
         *     {@link #reconnectTimeout}: {@code prefetch server HOST:PORT unavailable: ... (retried for N ms)}), or the server's refusal (unknown
         *     dataset, an option the server refuses such as a batch size not set), with the Flight status code
         */
        public PrefetchClient open() {
            PrefetchClient c = new PrefetchClient(this);
            try {
                c.resumeFrom = resume;
                c.fetchInfo();
                if (resume != null && c.endpoints.cluster()) {
                    throw new IllegalArgumentException("resumeFrom: the dataset is served by a cluster of "
                            + c.endpoints.targets().size() + " endpoints, and a state is of one part's stream: "
                            + "resuming a new client inside a cluster's epoch is not supported; start the epoch over");
                }
                return c;
            } catch (RuntimeException e) {
                c.close();
                throw e;
            }
        }
    }
}
