package dev.gdsloader.service.server;

import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.service.protocol.BearerAuth;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Logger;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The standalone prefetch service on Arrow Flight: serves the datasets under one root directory (service/README.md is
 * the wire contract). {@code ListFlights} lists the datasets, {@code GetFlightInfo} describes a request's epoch,
 * {@code DoGet} streams one epoch as Arrow record batches (host delivery) and {@code DoExchange} one epoch as CUDA IPC
 * handles with the client's releases coming back (GPU delivery, same host). Each stream is a session with its own
 * {@code GdsLoader}, which keeps its prefetch depth of batches ready.
 *
 * <pre>{@code
 * try (PrefetchServer server = PrefetchServer.builder(Path.of("/data")).port(0).start()) {
 *     System.out.println("serving on " + server.port());
 *     server.awaitClose();
 * }
 * }</pre>
 *
 * <p>Ownership: the server owns its Flight server (gRPC transport and executor), its Arrow allocator (unless one was
 * given), every session's loader and the cleanup thread that frees them; {@link #close()} frees them once. Native
 * memory: the server takes a child of {@link Builder#allocator} (the server-wide budget) and each session a child of
 * that for its loader, so a session whose ring does not fit is refused with RESOURCE_EXHAUSTED naming both sizes
 * ({@link #allocator()} shows what sessions hold). Dataset names resolve under the root by real paths
 * ({@link DatasetRoot}), and errors sent to clients carry neither the root's absolute path nor file bytes. Loopback
 * by default; another address needs a bearer token ({@link Builder#token} or per-client {@link Builder#clientTokens},
 * {@link BearerAuth}), TLS is {@link Builder#tls} (its key checked against its certificate at start, and a cluster's
 * members calling each other over TLS); {@link ServerLimits} bound connections, sessions, calls, idle time, message size and the
 * sessions' memory (the server's allocator child has {@link ServerLimits#memoryBudget()}). Thread-safe.
 */
public final class PrefetchServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PrefetchServer.class.getName());
    /** How long {@link #close()} waits for sessions to end and free their loaders, ms. */
    static final long CLOSE_SESSIONS_MILLIS = 15_000;
    /**
     * The write-buffer water marks of every accepted connection (low 2 MiB, high 4 MiB; Netty's default 32/64 KiB).
     * Netty's HTTP/2 flow controller hands the socket at most what keeps the channel below its high mark, then waits
     * for the channel to drain below the low mark before it writes on: with 64 KiB the server's event loop went
     * through the flow controller, the pipeline and a {@code writev} for about every 64 KiB of a batch. What is queued
     * is slices of the batch's memory (zero-copy), still bounded by the client's HTTP/2 window; gRPC's
     * {@code isReady()} does not depend on it.
     */
    static final WriteBufferWaterMark WRITE_BUFFER = new WriteBufferWaterMark(2 << 20, 4 << 20);
    /** How long {@link #close()} waits for Flight's own close after the event loops stopped, ms. */
    private static final long FLIGHT_CLOSE_MILLIS = 500;
    /** Default of {@link Builder#registrationLinger}, seconds. */
    public static final long DEFAULT_REGISTRATION_LINGER_SECONDS = 30;
    private static final Duration DEFAULT_REGISTRATION_LINGER = Duration.ofSeconds(DEFAULT_REGISTRATION_LINGER_SECONDS);
    /** Default of {@link Builder#sessionLinger}, ms. */
    public static final long DEFAULT_SESSION_LINGER_MILLIS = 5_000;
    /**
     * The client name whose token a cluster member sends the other members when it has named client tokens
     * ({@link Builder#clientTokens}) and no shared token ({@link Builder#token}).
     */
    public static final String CLUSTER_CLIENT = "cluster";

    private final DatasetRoot root;
    private final NativeAllocator allocator;
    private final BufferAllocator arrow;
    private final boolean ownsArrow;
    private final FlightServer flight;
    /** gRPC's Netty event loops, the server's own: shutting them down ends connections gRPC's close would wait on. */
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final ExecutorService cleanup;
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();
    private final PrefetchProducer producer;
    /** Sessions kept between a client's streams (its next epoch, or the stream after its GetFlightInfo). */
    private final ParkedSessions parked;
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    private final InetSocketAddress address;
    private final boolean tls;
    private final ServerLimits limits;
    private final ConnectionGuard guard;
    /** The one I/O pool of every session's loader, and the ceilings on what a request may ask for. */
    private final SessionCeilings ceilings;
    /** This server's ask for the process registry's linger (the longest live ask holds); taken back by {@link #close()}. */
    private final MappedShards.LingerRequest linger;
    private volatile boolean closing;

    private PrefetchServer(Builder b, DatasetRoot root) throws IOException {
        this.root = root;
        InetAddress bind = resolve(b.bind, b.port);
        String at = "cannot listen on " + b.bind + ":" + b.port + ": ";
        boolean anyToken = b.token != null || !b.clientTokens.isEmpty();
        if (!bind.isLoopbackAddress() && !anyToken && isOfThisMachine(bind)) { // else the bind fails, naming that
            throw new IOException(at + "a non-loopback address needs a bearer token "
                    + "(serve --token-file FILE or the environment variable " + BearerAuth.ENVIRONMENT_VARIABLE
                    + "; Builder.token): without one anyone who can reach it reads every dataset");
        }
        this.tls = b.tlsCert != null;
        for (Path pem : tls ? List.of(b.tlsCert, b.tlsKey) : List.<Path>of()) {
            if (Files.exists(pem) && !Files.isRegularFile(pem)) { // a directory, or a FIFO that would block the read
                throw new IOException(at + "TLS " + (pem.equals(b.tlsCert) ? "certificate " : "key ")
                        + pem + " is not a regular file: expected a PEM file");
            }
        }
        if (b.tlsClientCa != null) {
            if (!tls) {
                throw new IOException(at + "client certificates (Builder.tlsClientCa, serve --tls-client-ca) need TLS: give the "
                        + "server's certificate and key too");
            }
            try {
                TlsIdentity.certificates(b.tlsClientCa, Files.readAllBytes(b.tlsClientCa));
            } catch (IOException e) {
                throw new IOException(at + "the CA of client certificates (" + b.tlsClientCa + "): " + e.getMessage(), e);
            }
        }
        if (tls && Files.isRegularFile(b.tlsCert) && Files.isRegularFile(b.tlsKey)) { // a missing one is named by Flight below
            try {
                TlsIdentity.read(b.tlsCert, b.tlsKey);
            } catch (IOException e) {
                throw new IOException(at + e.getMessage(), e);
            }
        }
        Map<String, String> tokens = new LinkedHashMap<>(b.clientTokens);
        if (b.token != null && tokens.putIfAbsent(BearerAuth.SHARED_NAME, b.token) != null) {
            throw new IOException(at + "the client tokens name a client '" + BearerAuth.SHARED_NAME + "', the name of the shared "
                    + "token (--token-file): rename that client");
        }
        ClusterInfo.Peers peers = null;
        if (b.cluster != null) {
            String peerToken = b.token != null ? b.token : b.clientTokens.get(CLUSTER_CLIENT);
            if (anyToken && peerToken == null) {
                throw new IOException(at + "a cluster member sends the other members a token: give the shared token "
                        + "(--token-file) or a client named '" + CLUSTER_CLIENT + "' in the client tokens, the same on every member");
            }
            peers = tls ? new ClusterInfo.Peers(peerToken, clusterTrust(b, at), pem(b.tlsCert, at), pem(b.tlsKey, at))
                    : new ClusterInfo.Peers(peerToken, null, null, null);
        }
        Cluster cluster = b.cluster == null ? null : b.cluster.withTls(tls);
        this.limits = b.limits;
        ClientGoneLog.install(); // a client killed mid-stream: one INFO line, not gRPC's WARNING with a stack trace
        this.allocator = b.allocator.newChild("prefetch server of " + root.realPath() + " (memory budget " + limits.memoryBudget() + " B)",
                limits.memoryBudget(), limits.memoryBudget());
        this.guard = new ConnectionGuard(limits);
        this.ownsArrow = b.arrow == null;
        this.arrow = ownsArrow ? new RootAllocator() : b.arrow.newChildAllocator("prefetch server of " + root.realPath(), 0, Long.MAX_VALUE);
        this.cleanup = Executors.newCachedThreadPool(r -> Thread.ofPlatform().daemon().name("gdsloader-session-cleanup").unstarted(r));
        this.parked = new ParkedSessions(b.sessionLinger, limits.sessions(), cleanup);
        this.ceilings = new SessionCeilings(limits, b.ioThreadFactory);
        this.producer = new PrefetchProducer(this.root, allocator, arrow, cleanup, sessions, () -> closing, this::location,
                cluster, peers, parked, ceilings);
        this.boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("gdsloader-flight-boss", true), NioIoHandler.newFactory());
        this.workers = new MultiThreadIoEventLoopGroup(0, new DefaultThreadFactory("gdsloader-flight-io", true), NioIoHandler.newFactory());
        Consumer<NettyServerBuilder> transport = nb -> {
            nb.bossEventLoopGroup(boss).workerEventLoopGroup(workers).channelType(NioServerSocketChannel.class);
            guard.configure(nb); // the limits; its counting acceptor replaces the channel type
            nb.withChildOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WRITE_BUFFER); // HTTP/2 writes in MiB, not 64 KiB
        };
        FlightServer s;
        try {
            Location listen = tls ? Location.forGrpcTls(bind.getHostAddress(), b.port) : Location.forGrpcInsecure(bind.getHostAddress(), b.port);
            FlightServer.Builder fb = FlightServer.builder(arrow, listen, producer).transportHint("grpc.builderConsumer", transport);
            if (tls) {
                fb.useTls(b.tlsCert.toFile(), b.tlsKey.toFile());
                if (b.tlsClientCa != null) {
                    fb.useMTlsClientVerification(b.tlsClientCa.toFile());
                }
            }
            if (!tokens.isEmpty()) {
                fb.headerAuthenticator(BearerAuth.authenticator(tokens));
            }
            fb.maxInboundMessageSize(limits.maxMessageBytes());
            s = fb.build();
        } catch (IOException | RuntimeException e) {
            shutdown(boss, workers);
            parked.close();
            ceilings.close();
            cleanup.shutdown();
            arrow.close();
            allocator.close();
            throw new IOException("cannot listen on " + b.bind + ":" + b.port + ": " + (tls ? "TLS certificate " + b.tlsCert
                    + " or key " + b.tlsKey + " not usable (PEM certificate chain, PKCS#8 PEM key): " : "") + e.getMessage(), e);
        }
        try {
            s.start();
        } catch (IOException | RuntimeException e) {
            closeQuietly(s);
            shutdown(boss, workers);
            parked.close();
            ceilings.close();
            cleanup.shutdown();
            arrow.close();
            allocator.close();
            Throwable cause = e.getCause() != null && !(e instanceof BindException) ? e.getCause() : e;
            throw new IOException("cannot listen on " + b.bind + ":" + b.port + ": " + bindFailure(cause, bind, b.port), e);
        }
        this.flight = s;
        this.address = new InetSocketAddress(bind, s.getPort());
        // MAPPED sessions over the same shards (each epoch is a session) reuse the registrations of the one before
        this.linger = dev.gdsloader.loader.MappedRegistrations.requestLinger(b.registrationLinger);
    }

    /** @return the bytes of a TLS PEM file; @throws IOException naming it, prefixed by {@code at} */
    private static byte[] pem(Path file, String at) throws IOException {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IOException(at + "TLS file " + file + " cannot be read: " + e, e);
        }
    }

    /** @return the PEM certificates a member trusts in its peers: {@link Builder#clusterTrust}, else its own chain */
    private static byte[] clusterTrust(Builder b, String at) throws IOException {
        Path pem = b.clusterTrust != null ? b.clusterTrust : b.tlsCert;
        try {
            if (b.clusterTrust != null && Files.exists(pem) && !Files.isRegularFile(pem)) {
                throw new IOException("is not a regular file");
            }
            byte[] bytes = Files.readAllBytes(pem);
            TlsIdentity.certificates(pem, bytes); // at least one certificate, each parsed (naming the file)
            return bytes;
        } catch (IOException e) {
            throw new IOException(at + "the cluster's trusted certificates (" + pem + "): " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("FutureReturnValueIgnored") // the shutdown futures are awaited below, as terminationFuture()
    private static void shutdown(EventLoopGroup... groups) {
        for (EventLoopGroup g : groups) {
            g.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
        for (EventLoopGroup g : groups) {
            g.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    /** Waits until every session is freed or the deadline passes; @return whether all were freed */
    private boolean awaitSessions(long deadlineNanos, boolean warn) throws InterruptedException {
        boolean allFreed = true;
        for (Session s : Set.copyOf(sessions)) {
            if (!s.awaitFreed(Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())))) {
                if (warn) {
                    LOG.warning("gdsloader: session " + s.id() + " did not free its loader in time");
                }
                allFreed = false;
            }
        }
        return allFreed;
    }

    private static void closeQuietly(FlightServer s) {
        try {
            s.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException ignored) {
            // never started
        }
    }

    private static InetAddress resolve(String bind, int port) throws IOException {
        try {
            return InetAddress.getByName(bind);
        } catch (UnknownHostException e) {
            throw new IOException("cannot listen on " + bind + ":" + port + ": unknown host '" + bind
                    + "' (no such name or address)", e);
        }
    }

    private static boolean isOfThisMachine(InetAddress a) {
        try {
            return a.isAnyLocalAddress() || a.isLoopbackAddress() || NetworkInterface.getByInetAddress(a) != null;
        } catch (SocketException ignored) {
            return true; // cannot tell: treat it as one
        }
    }

    /** @return why a bind failed, in the user's terms: the port in use, an address not of this machine, or the OS text */
    private static String bindFailure(Throwable e, InetAddress address, int port) {
        Throwable t = e;
        while (t.getCause() != null && !(t instanceof BindException)) {
            t = t.getCause();
        }
        String os = String.valueOf(t.getMessage());
        if (t instanceof BindException || os.contains("in use") || os.contains("assign requested address")) {
            if (!isOfThisMachine(address)) {
                return address.getHostAddress() + " is not an address of this machine (" + os.replaceFirst("^bind\\(\\.\\.\\) failed: ", "") + ")";
            }
            if (os.contains("in use")) {
                return "port " + port + " is in use (" + os.replaceFirst("^bind\\(\\.\\.\\) failed: ", "") + ")";
            }
        }
        return os;
    }

    /**
     * @param datasetRoot the directory whose datasets clients may open (by paths relative to it); nothing outside
     *     its real path is served ({@link DatasetRoot}); {@code /} or a system directory only with
     *     {@link Builder#allowSystemRoot()}
     * @return a builder: bind 127.0.0.1, port 0 (ephemeral), the process root as memory budget
     */
    public static Builder builder(Path datasetRoot) {
        return new Builder(datasetRoot);
    }

    /** @return the port the server listens on (the one chosen when port 0 was asked for) */
    public int port() {
        return address.getPort();
    }

    /** @return the address the server listens on */
    public InetSocketAddress address() {
        return address;
    }

    /** @return the Flight location of this server, {@code grpc+tcp://HOST:PORT} ({@code grpc+tls://} with TLS) */
    public Location location() {
        String host = address.getAddress().getHostAddress();
        return tls ? Location.forGrpcTls(host, port()) : Location.forGrpcInsecure(host, port());
    }

    /** @return the dataset root, absolute and normalized, as the builder was given it */
    public Path root() {
        return root.path();
    }

    /**
     * @return the server's native allocator: a child of {@link Builder#allocator}'s whose children are the sessions'
     *     (their loaders' rings); owned and closed by the server
     */
    public NativeAllocator allocator() {
        return allocator;
    }

    /**
     * @return the server's Arrow allocator, whose children are the sessions' (wrapped batch memory Flight still holds,
     *     bookkeeping columns, metadata); owned and closed by the server
     */
    public BufferAllocator arrowAllocator() {
        return arrow;
    }

    /** @return the limits the server enforces */
    public ServerLimits limits() {
        return limits;
    }

    /** @return the I/O pool and request ceilings of the sessions (tests look at the pool) */
    SessionCeilings ceilings() {
        return ceilings;
    }

    /** @return the connection and call limits in force (tests look at their counts) */
    ConnectionGuard guard() {
        return guard;
    }

    /**
     * @return sessions not yet freed and not parked: streams in progress, and finished ones whose last buffers gRPC
     *     still holds (a snapshot: sessions move between the two counts as streams end and start)
     */
    public int sessions() {
        return Math.max(0, sessions.size() - parked.size());
    }

    /**
     * @return sessions parked for a client's next stream ({@link Builder#sessionLinger}): each holds its loader and ring
     *     until a stream takes it, its linger passes, a new session needs its memory or the server closes
     */
    public int parkedSessions() {
        return parked.size();
    }

    /**
     * Frees every parked session now and waits until their memory is back in the server's allocator (e.g. between two
     * benchmark rows, so that no parked loader reads ahead during the next).
     *
     * @return how many were parked
     * @throws InterruptedException if interrupted while waiting (at most about 3 s)
     */
    public int freeParkedSessions() throws InterruptedException {
        return parked.evictAll(Session.DRAIN_MILLIS + 1_000);
    }

    /**
     * @return sessions opened since the server started: one per GetFlightInfo, per stream (DoGet) and per exchange
     *     (DoExchange) that passed its checks and found no parked session to reuse ({@link Builder#sessionLinger}: a
     *     client's next epoch, or its first stream after GetFlightInfo); a CUDA_IPC exchange continued across epochs
     *     ({@code {"next": E+1}}) stays one session
     */
    public long sessionsOpened() {
        return producer.sessionsOpened();
    }

    /**
     * Blocks until the server is closed by {@link #close()} from another thread.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitClose() throws InterruptedException {
        closedLatch.await();
    }

    /**
     * Tells every stream the server is shutting down (UNAVAILABLE, "server shutting down ..."), stops the Flight
     * server (waiting up to 3 s for calls to end, then cancelling them) and frees every session's loader (waiting up to
     * 15 s in all for loaders whose reads are in flight). Returns within about 25 s, within about 3 s when no read is
     * stuck; idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        try {
            // streams see `closing` within a millisecond and end with UNAVAILABLE "server shutting down"; clients that
            // read get it and go. A connection whose client stopped reading would hold its batches until Netty's HTTP/2
            // close, waiting for a GOAWAY queued behind the unread data, gave up: shutting the event loops down closes
            // such connections at once, and their queued writes (our batches) are released
            flight.shutdown();
            parked.close();
            awaitSessions(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_000), false);
            shutdown(boss, workers);
            // gRPC's server hears of a transport's end on that transport's event loop: a connection that was still open
            // when the loops stopped (a client that stopped reading) never reports it, and FlightServer.close() then
            // waits 3 s, cancels and polls 3 s more. The connections are closed already; that wait is done off this
            // thread, bounded, and the sessions are awaited below
            Thread.ofPlatform().daemon().name("gdsloader-flight-close").start(() -> closeQuietly(flight))
                    .join(FLIGHT_CLOSE_MILLIS);
            boolean allFreed = awaitSessions(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_SESSIONS_MILLIS), true);
            cleanup.shutdown();
            cleanup.awaitTermination(5, TimeUnit.SECONDS);
            ceilings.close(); // after every loader closed: none of their reads is left on the pool
            linger.close(); // no linger left undoes the lingering registrations now; another server's stays
            root.close(); // a loader still reading (not freed in time) can open no new file beneath it
            if (allFreed && sessions.isEmpty()) {
                try {
                    arrow.close();
                    allocator.close();
                } catch (IllegalStateException e) {
                    LOG.warning("gdsloader: " + e.getMessage());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closedLatch.countDown();
        }
    }

    /**
     * Configures a {@link PrefetchServer}: the address, the dataset root, the memory budget, authentication, TLS and
     * limits. Not thread-safe.
     */
    public static final class Builder {
        private final Path root;
        private String bind = "127.0.0.1";
        private int port;
        private NativeAllocator allocator = NativeAllocator.root();
        private BufferAllocator arrow;
        private boolean allowSystemRoot;
        private boolean allowHardLinks;
        private Cluster cluster;
        private String token;
        private Map<String, String> clientTokens = Map.of();
        private Path tlsCert;
        private Path clusterTrust;
        private Path tlsClientCa;
        private Path tlsKey;
        private ServerLimits limits = ServerLimits.defaults();
        private Duration registrationLinger = DEFAULT_REGISTRATION_LINGER;
        private Duration sessionLinger = Duration.ofMillis(DEFAULT_SESSION_LINGER_MILLIS);
        private java.util.concurrent.ThreadFactory ioThreadFactory;

        private Builder(Path root) {
            this.root = Objects.requireNonNull(root, "datasetRoot").toAbsolutePath().normalize();
        }

        /**
         * @param address the address to listen on; 127.0.0.1 (loopback only) by default; any address that is not
         *     loopback needs {@link #token} ({@link #start()} refuses otherwise)
         * @return this
         */
        public Builder bind(String address) {
            this.bind = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * @param port TCP port, 0 for an ephemeral one (read it back with {@link PrefetchServer#port()})
         * @return this
         * @throws IllegalArgumentException if outside 0..65535
         */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0..65535, got " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * @param parent the allocator the server's sessions take their loaders' memory from, through a server child: the
         *     server-wide budget (default: {@link NativeAllocator#root()}); owned by the caller, who closes it after the
         *     server
         * @return this
         */
        public Builder allocator(NativeAllocator parent) {
            this.allocator = Objects.requireNonNull(parent, "allocator");
            return this;
        }

        /**
         * @param parent the Arrow allocator the server takes a child of for Flight's buffers (default: a new
         *     {@link RootAllocator} the server owns); owned by the caller, who closes it after the server
         * @return this
         */
        public Builder arrowAllocator(BufferAllocator parent) {
            this.arrow = Objects.requireNonNull(parent, "arrowAllocator");
            return this;
        }

        /**
         * Serves a root of {@code /} or a system directory ({@code /etc}, {@code /usr}, {@code /home}, ... as
         * {@link DatasetRoot#of} lists them), which {@link #start()} otherwise refuses: every client could read it.
         *
         * @return this
         */
        public Builder allowSystemRoot() {
            this.allowSystemRoot = true;
            return this;
        }

        /**
         * Serves regular files with more than one hard link ({@code serve --allow-hard-links}), which are refused by
         * default, naming the file: a hard link under the root may be a second name of a file outside it, which its
         * path cannot tell (service/README.md, "Security").
         *
         * @return this
         */
        public Builder allowHardLinks() {
            this.allowHardLinks = true;
            return this;
        }

        /**
         * Makes this server one part of a multi-server service (service/README.md, "Several machines"): its datasets
         * are part {@code cluster.self()} of the cluster's datasets of the same names, and {@code GetFlightInfo} answers
         * with the endpoints of every part (asking the other members about theirs). Bind so that the other members and
         * the clients reach this server at its member address.
         *
         * @param cluster the members in part order (the same list on every server) and this server's index
         * @return this
         */
        public Builder cluster(Cluster cluster) {
            this.cluster = Objects.requireNonNull(cluster, "cluster");
            return this;
        }

        /**
         * Requires every call to carry {@code Authorization: Bearer TOKEN} ({@link BearerAuth}); others end
         * UNAUTHENTICATED. Needed to bind an address that is not loopback.
         *
         * @param token the shared token, 16 to 4096 printable ASCII characters ({@link BearerAuth#check}), or null
         *     for none
         * @return this
         * @throws IllegalArgumentException if the token is not valid (the message does not quote it)
         */
        public Builder token(String token) {
            this.token = token == null ? null : BearerAuth.check(token);
            return this;
        }

        /**
         * Admits per-client tokens, each with its client's name ({@link BearerAuth#readNamed}, {@code serve
         * --client-tokens FILE}): a call is admitted with any of them (or the shared {@link #token}), and its peer
         * identity, which the server's log lines and per-client state (parked sessions) use, is the token's name
         * ({@link BearerAuth#SHARED_NAME} for the shared token). Needed, as a token is, to bind an address that is not
         * loopback. In a cluster without a shared token, the member sends the token named {@value #CLUSTER_CLIENT}
         * to the other members.
         *
         * @param tokensByName client name to token (names as {@link BearerAuth#readNamed} allows, tokens
         *     {@link BearerAuth#check}ed, each its own); empty for none (the default)
         * @return this
         * @throws IllegalArgumentException if a token is not valid or two names share one (the message does not quote
         *     a token)
         */
        public Builder clientTokens(Map<String, String> tokensByName) {
            Map<String, String> copy = Map.copyOf(tokensByName);
            if (!copy.isEmpty()) {
                BearerAuth.authenticator(copy); // checks every token, and that each is its own
            }
            this.clientTokens = copy;
            return this;
        }

        /**
         * Serves over TLS ({@code grpc+tls}); clients trust the certificate or its CA
         * ({@link PrefetchClient.Builder#tls}). {@link #start()} checks the key against the certificate (a mismatched
         * pair is refused in one line naming both files). In a {@link #cluster}, every member serves over TLS and calls
         * the others over TLS, verifying their certificates against {@link #clusterTrust} (default: this chain).
         *
         * @param certificateChain PEM certificate chain, the server's first
         * @param privateKey PEM private key in PKCS#8 ({@code BEGIN PRIVATE KEY}), unencrypted, RSA, DSA or EC
         * @return this
         */
        public Builder tls(Path certificateChain, Path privateKey) {
            this.tlsCert = Objects.requireNonNull(certificateChain, "certificateChain");
            this.tlsKey = Objects.requireNonNull(privateKey, "privateKey");
            return this;
        }

        /**
         * The certificates a cluster member over TLS trusts when it calls the other members (it verifies each peer's
         * certificate and host name, as clients do). Default: the member's own certificate chain ({@link #tls}), which
         * suits members sharing one certificate whose subject alternative names cover every member, or chains that
         * hold their CA.
         *
         * @param trustedPem PEM file of the trusted certificates (the members' CA)
         * @return this
         */
        public Builder clusterTrust(Path trustedPem) {
            this.clusterTrust = Objects.requireNonNull(trustedPem, "trustedPem");
            return this;
        }

        /**
         * Requires mutual TLS (Flight's {@code useMTlsClientVerification}): with {@link #tls}, a client must present a
         * certificate chaining to one of these, or its handshake fails (the client sees UNAVAILABLE). Clients:
         * {@code PrefetchClient.Builder.tlsClientCertificate}; the members of a {@link #cluster} present their own
         * server certificate, so it must chain to this CA as well. The bearer token is still checked.
         *
         * @param caPem PEM file of the CA certificates client certificates must chain to
         * @return this
         */
        public Builder tlsClientCa(Path caPem) {
            this.tlsClientCa = Objects.requireNonNull(caPem, "caPem");
            return this;
        }

        /**
         * @param limits connections, sessions, idle timeout, largest message and memory budget
         *     (default {@link ServerLimits#defaults()})
         * @return this
         */
        public Builder limits(ServerLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * How long the MAPPED path's shard registrations stay after the session that made them ended
         * ({@link MappedShards#requestLinger(Duration)}: the process's registry keeps the longest linger of the servers
         * running in it; {@link #close()} takes back this server's only):
         * each epoch of a client is a new session whose loader would otherwise map and register (read) every shard
         * again. Lingering registrations are page cache registered with CUDA, in no session's budget.
         *
         * @param linger zero or more (default {@value #DEFAULT_REGISTRATION_LINGER_SECONDS} s; zero undoes each
         *     registration with its last session)
         * @return this
         * @throws IllegalArgumentException if negative
         */
        public Builder registrationLinger(Duration linger) {
            if (linger.isNegative()) {
                throw new IllegalArgumentException("registration linger must be >= 0, got " + linger);
            }
            this.registrationLinger = linger;
            return this;
        }

        /**
         * How long a session stays parked after its call for the same client's next stream of the same request
         * ({@link ParkedSessions}, service/README.md "Sessions across epochs"): a {@code DoGet} sent to its end is kept
         * for the client's next epoch, whose reads its loader starts at once, and a {@code GetFlightInfo}'s session for
         * the client's first stream. A new session per epoch builds its loader, allocates and first touches its ring
         * and starts its threads again; with 32 clients reading 2 GiB that took most of each epoch (session 7 of
         * BENCHMARKS.md). Parked sessions hold their ring in the server's memory budget until taken, their linger
         * passes, a new session needs the memory, or the server closes; at most {@link ServerLimits#sessions()} are
         * parked (parking one more frees the one parked longest).
         *
         * @param linger zero or more (default {@value #DEFAULT_SESSION_LINGER_MILLIS} ms; zero frees each session with
         *     its call)
         * @return this
         * @throws IllegalArgumentException if negative
         */
        public Builder sessionLinger(Duration linger) {
            if (linger.isNegative()) {
                throw new IllegalArgumentException("session linger must be >= 0, got " + linger);
            }
            this.sessionLinger = linger;
            return this;
        }

        /**
         * A fault hook for tests: makes the threads of the sessions' I/O pool ({@link SessionCeilings}).
         *
         * @param threads the factory, e.g. one that fails on its Nth thread as the JVM does when the OS gives no more
         * @return this
         */
        Builder ioThreadFactory(java.util.concurrent.ThreadFactory threads) {
            this.ioThreadFactory = Objects.requireNonNull(threads, "threads");
            return this;
        }

        /**
         * Binds and starts serving.
         *
         * @return the running server, owned by the caller
         * @throws IOException if the root is not a directory, or is {@code /} or a system directory without
         *     {@link #allowSystemRoot()}, or the address cannot be bound: one line
         *     {@code cannot listen on ADDRESS:PORT: REASON}, the reason an unknown host, an address not of this machine
         *     or the port in use; a non-loopback address without {@link #token} or {@link #clientTokens}; a TLS
         *     certificate or key that cannot be read, or a key that is not the certificate's (naming both files); a
         *     cluster over TLS whose {@link #clusterTrust} cannot be read; a cluster with client tokens but neither a
         *     shared token nor one named {@value PrefetchServer#CLUSTER_CLIENT}; {@link #tlsClientCa} without TLS or
         *     without a readable certificate
         */
        public PrefetchServer start() throws IOException {
            DatasetRoot r = DatasetRoot.of(root, allowSystemRoot, allowHardLinks);
            try {
                return new PrefetchServer(this, r);
            } catch (IOException | RuntimeException | Error e) {
                r.close();
                throw e;
            }
        }
    }
}
