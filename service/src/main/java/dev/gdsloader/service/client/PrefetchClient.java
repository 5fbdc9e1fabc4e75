package dev.gdsloader.service.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.LoaderState;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.service.protocol.BearerAuth;
import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.protocol.Protocol;
import dev.gdsloader.service.protocol.Request;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * A blocking Arrow Flight client of a prefetch server ({@code dev.gdsloader.service.server.PrefetchServer}), for training loops: one request (dataset, loader options,
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
 * <p>Several servers (a cluster, service/README.md "Several machines"): when the server asked answers
 * {@code GetFlightInfo} with one endpoint per part, each epoch reads those endpoints in their order (part 0 first),
 * each from its own server, resuming per endpoint after a break as above; a part whose server stays gone ends the
 * epoch with a {@link PrefetchServiceException} naming that server's {@code host:port} and the part (its index and
 * global record range). {@link #lastState()} is then a state of the current part's stream.
 *
 * <p>Ownership: the client owns its Flight clients (gRPC's threads are daemons, so a process that fails without
 * closing the client still exits), its Arrow allocator, its deadline timer (a daemon thread) and, per CUDA_IPC stream,
 * its mappings of the server's slot buffers and the server's interprocess ready events (opened once per handle, closed
 * when the epoch's batches are all released, before the stream completes; a batch's consumer waits for its event on
 * its own stream, {@link RemoteBatch#awaitOn}; CUDA cannot open a handle in the process that created it, so the client
 * must be another process than the server for {@link Delivery#CUDA_IPC}). Each batch handed out is owned by the
 * caller until closed; {@link #close()} releases those still held. Not thread-safe: one consumer thread.
 */
public final class PrefetchClient implements Iterable<RemoteBatch>, AutoCloseable {
    /** The default HTTP/2 flow-control window of a client's connections, bytes ({@link Builder#flowControlWindow}). */
    public static final int DEFAULT_WINDOW = 16 << 20;

    private final String peer;
    private final Location location;
    private final String token;
    private final java.nio.file.Path tlsRoots;
    /** {certificate chain, key} presented for mutual TLS, or null. */
    private final java.nio.file.Path[] clientCertificate;
    private final Request request;
    private final long timeoutMillis;
    private final long reconnectMillis;
    private final int window;
    private final BufferAllocator allocator = new RootAllocator();
    private final Deadlines deadlines;
    private final HeldBatches held = new HeldBatches();
    private final ClientDelivery delivery;
    private final InfoConnection flight;
    private JsonNode info;
    /** What each epoch reads, in order: one endpoint, or a cluster's parts (from GetFlightInfo). */
    private Endpoints endpoints;
    private LoaderState resumeFrom;
    private long nextEpoch;
    private EpochIterator current;
    private boolean closed;

    private PrefetchClient(Builder b) {
        this.peer = b.host + ":" + b.port;
        this.location = b.tlsRoots != null ? Location.forGrpcTls(b.host, b.port) : Location.forGrpcInsecure(b.host, b.port);
        this.token = b.token;
        this.tlsRoots = b.tlsRoots;
        this.clientCertificate = b.clientCertificate;
        this.request = new Request(b.dataset, b.options, b.delivery, 0, null);
        this.timeoutMillis = b.timeout.toMillis();
        this.reconnectMillis = b.reconnectTimeout.toMillis();
        this.window = b.window;
        this.deadlines = new Deadlines(timeoutMillis);
        this.delivery = ClientDelivery.of(b.delivery, new ClientContext(allocator, deadlines, b.device, held));
        this.flight = new InfoConnection(peer, location, this::connectTo);
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
        if (current != null && !current.ended()) {
            throw new IllegalStateException("the previous epoch was not finished: iterate it to its end first");
        }
        LoaderState resume = current == null ? resumeFrom : null;
        current = new EpochIterator(this, request, endpoints, delivery, deadlines, reconnectMillis,
                resume != null ? resume.epoch() : nextEpoch, resume);
        nextEpoch = current.epoch + 1;
        return current;
    }

    /** @throws IllegalStateException if the client is closed */
    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("client of " + peer + " is closed");
        }
    }

    /**
     * @return a new connection to {@code at}, a server of this client's endpoints (owned by {@link #endpoints}), over
     *     TLS trusting {@code tlsRoots} and with the bearer token, where set, and this client's flow-control window
     */
    private Connection connectTo(Location at) {
        return Connection.open(allocator, at, tlsRoots, clientCertificate, token, window);
    }

    /** {@code GetFlightInfo} of the request ({@link InfoConnection#fetch}): the info and the endpoints to read. */
    private void fetchInfo() {
        FlightInfo fi = flight.fetch(request, timeoutMillis, reconnectMillis);
        byte[] m = fi.getAppMetadata();
        try {
            info = Protocol.JSON.readTree(m == null ? "{}" : new String(m, StandardCharsets.UTF_8));
        } catch (java.io.IOException e) {
            throw new PrefetchServiceException("prefetch server " + peer + " sent flight info that is not JSON", e, null);
        }
        endpoints = Endpoints.of(fi, location, this::connectTo);
    }

    /**
     * Closes the stream in progress, releases every batch still held (their memory becomes invalid), the CUDA IPC
     * mappings, the Flight clients and the allocator. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (current != null) {
            current.dropFetched();
        }
        held.releaseAll();
        if (current != null) {
            current.dropStream();
        }
        delivery.close();
        closed = true;
        if (endpoints != null) {
            endpoints.close();
        }
        flight.close();
        deadlines.close();
        allocator.close();
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
        private java.nio.file.Path[] clientCertificate;
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
         * @param token the server's bearer token ({@code PrefetchServer.Builder.token}), sent on every call as
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
         * Presents this client certificate to a server that requires one (mutual TLS: {@code serve --tls-client-ca},
         * {@code PrefetchServer.Builder.tlsClientCa}); used with {@link #tls}, without which it is ignored. The files
         * are read when a connection is made; one that cannot be read fails that connection naming both files.
         *
         * @param certificateChain PEM certificate chain of this client, issued by a CA the server trusts
         * @param privateKey its PEM private key, unencrypted PKCS#8
         * @return this
         */
        public Builder tlsClientCertificate(java.nio.file.Path certificateChain, java.nio.file.Path privateKey) {
            this.clientCertificate = new java.nio.file.Path[] {Objects.requireNonNull(certificateChain, "certificateChain"),
                    Objects.requireNonNull(privateKey, "privateKey")};
            return this;
        }

        /**
         * Connects and asks the server about the request ({@code GetFlightInfo}), which checks it as a stream would.
         *
         * @return the client, owned by the caller
         * @throws dev.gdsloader.memory.MissingJvmFlagException if the JVM lacks
         *     {@code --add-opens=java.base/java.nio=ALL-UNNAMED} (Arrow Java's memory needs it: checked before connecting)
         * @throws PrefetchServiceException naming what was wrong: the connection (a server UNAVAILABLE for all of
         *     {@link #reconnectTimeout}: {@code prefetch server HOST:PORT unavailable: ... (retried for N ms)}), or the server's refusal (unknown
         *     dataset, an option the server refuses such as a batch size not set), with the Flight status code
         */
        public PrefetchClient open() {
            dev.gdsloader.memory.GdsLogging.init(); // WARNING unless -Dgdsloader.log raises it
            dev.gdsloader.memory.JvmFlags.requireArrowMemoryAccess("the prefetch client (Arrow Flight)");
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
