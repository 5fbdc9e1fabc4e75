package dev.gdsloader.cli;

import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.service.protocol.BearerAuth;
import dev.gdsloader.service.server.Cluster;
import dev.gdsloader.service.server.PrefetchServer;
import dev.gdsloader.service.server.ServerLimits;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader serve}: the standalone prefetch service (Arrow Flight) over the datasets under one directory, until the
 * process is stopped (a shutdown hook closes the server: every session's loader freed).
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Serve the datasets under DATASET_ROOT over Arrow Flight (dev.gdsloader.service.client.PrefetchClient, "
                + "pyarrow.flight; protocol in service/README.md): one loader per stream (one epoch), batches delivered as Arrow "
                + "record batches (DoGet) or, on the same host and GPU, as CUDA IPC handles (DoExchange). "
                + "Prints the address it listens on; runs until stopped.")
final class ServeCommand implements Callable<Integer>, RangedOptions {
    @Parameters(index = "0", paramLabel = "DATASET_ROOT", description = "directory whose datasets clients may open, by paths relative to it; links leading outside it are refused")
    Path root;

    @Option(names = "--port", defaultValue = "0", description = "TCP port; 0 picks a free one (printed) (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1",
            description = "address to listen on; any but loopback needs a bearer token (--token-file or GDSLOADER_TOKEN) "
                    + "(default: ${DEFAULT-VALUE})")
    String bind;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "file whose first line is the bearer token every client must send (16+ printable ASCII characters, "
                    + "e.g. openssl rand -hex 32); else the environment variable GDSLOADER_TOKEN, if set")
    Path tokenFile;

    @Option(names = "--client-tokens", paramLabel = "FILE",
            description = "file of per-client tokens, one name:token a line (# comments): a client sending one is admitted and "
                    + "named by it in the server's log; with or without --token-file (whose client is named 'shared')")
    Path clientTokens;

    @Option(names = "--tls-cert", paramLabel = "PEM",
            description = "serve over TLS with this PEM certificate chain (with --tls-key; the key is checked against it at start); "
                    + "with --cluster the members also call each other over TLS")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM", description = "the PEM private key (PKCS#8, unencrypted; RSA, DSA or EC) of --tls-cert")
    Path tlsKey;

    @Option(names = "--tls-client-ca", paramLabel = "PEM",
            description = "with --tls-cert: require mutual TLS, every client presenting a certificate issued by this CA "
                    + "(PrefetchClient.Builder.tlsClientCertificate); cluster members present their --tls-cert")
    Path tlsClientCa;

    @Option(names = "--cluster-ca", paramLabel = "PEM",
            description = "with --cluster and --tls-cert: the certificates (the members' CA) this member trusts when it calls the "
                    + "others over TLS (default: --tls-cert itself)")
    Path clusterCa;

    @Option(names = "--allow-system-root",
            description = "serve DATASET_ROOT even if it is / or a system directory (/etc, /usr, /home, ...), which is refused otherwise")
    boolean allowSystemRoot;

    @Option(names = "--allow-hard-links",
            description = "serve regular files with more than one hard link, which are refused otherwise (naming the file): "
                    + "a hard link under DATASET_ROOT may be a second name of a file outside it")
    boolean allowHardLinks;

    @Option(names = "--cluster", paramLabel = "HOST:PORT,...",
            description = "serve as one part of several servers: every server's address as clients reach it, in part order, "
                    + "the same list on every server (or @FILE: one host:port a line); GetFlightInfo then returns every part's endpoint")
    String cluster;

    @Option(names = "--cluster-index", paramLabel = "I",
            description = "this server's position in --cluster, from 0: its datasets are part I of the cluster's")
    Integer clusterIndex;
    @Option(names = "--max-connections", paramLabel = "N",
            description = "TCP connections open at once; one more closes the oldest not yet authenticated, or where all "
                    + "are, is refused RESOURCE_EXHAUSTED and closed (default: 256)")
    Integer maxConnections;

    @Option(names = "--max-connections-per-address", paramLabel = "N",
            description = "TCP connections open at once from one client address, counted as --max-connections (default: 64)")
    Integer maxConnectionsPerAddress;

    @Option(names = "--auth-timeout", paramLabel = "SECONDS",
            description = "a connection that has not started a call past authentication (the bearer token, if any) this "
                    + "long after it was accepted is closed (default: 3)")
    Integer authTimeoutSeconds;

    @Option(names = "--io-threads", paramLabel = "N",
            description = "threads of the server's one I/O pool, shared by every session; a request's ioThreads is "
                    + "clamped to it (default: 16)")
    Integer ioThreads;

    @Option(names = "--max-prefetch-depth", paramLabel = "N",
            description = "largest prefetchDepth a request may ask for; more is refused INVALID_ARGUMENT (default: 16)")
    Integer maxPrefetchDepth;

    @Option(names = "--max-batch-bytes", paramLabel = "SIZE", converter = ByteSize.class,
            description = "largest batch a request may ask for (batch size x bytes of a record of its columns), e.g. "
                    + "256MiB; more is refused INVALID_ARGUMENT (default: 1GiB)")
    Long maxBatchBytes;

    @Option(names = "--max-sessions", paramLabel = "N", description = "streams (sessions) at once on the server; more are refused RESOURCE_EXHAUSTED (default: 64)")
    Integer maxSessions;

    @Option(names = "--max-sessions-per-client", paramLabel = "N", description = "streams at once from one client address, at most --max-sessions (default: 16)")
    Integer maxSessionsPerClient;

    @Option(names = "--max-calls-per-connection", paramLabel = "N", description = "calls (requests) in progress on one connection (default: 32)")
    Integer maxCallsPerConnection;

    @Option(names = "--idle-timeout", paramLabel = "SECONDS",
            description = "a connection without a call, or that sends nothing, is closed after this long (default: 60)")
    Integer idleTimeoutSeconds;

    @Option(names = "--max-message", paramLabel = "SIZE", converter = ByteSize.class,
            description = "largest message a client may send, e.g. 1MiB (default: 1MiB); batches sent are not limited by it")
    Long maxMessage;

    /**
     * Declared ranges, checked before the server (or {@link ServerLimits}) sees a value, so that a refusal and a value
     * beyond an int name the option and its own range (the port is also checked by the server).
     */
    private static final Checks.Range PORT = new Checks.Range("--port", 0, 65535);
    private static final Checks.Range CONNECTIONS = new Checks.Range("--max-connections", 1, Integer.MAX_VALUE);
    private static final Checks.Range CONNECTIONS_PER_ADDRESS = new Checks.Range("--max-connections-per-address", 1, Integer.MAX_VALUE);
    private static final Checks.Range AUTH_TIMEOUT = new Checks.Range("--auth-timeout", 1, Integer.MAX_VALUE, "seconds");
    private static final Checks.Range IO_THREADS = new Checks.Range("--io-threads", 1, ServerLimits.MAX_IO_THREADS);
    private static final Checks.Range PREFETCH_DEPTH = new Checks.Range("--max-prefetch-depth", 1, Integer.MAX_VALUE);
    private static final Checks.Range BATCH_BYTES = new Checks.Range("--max-batch-bytes", 1, Long.MAX_VALUE, "bytes");
    private static final Checks.Range SESSIONS = new Checks.Range("--max-sessions", 1, Integer.MAX_VALUE);
    private static final Checks.Range SESSIONS_PER_CLIENT = new Checks.Range("--max-sessions-per-client", 1, Integer.MAX_VALUE);
    private static final Checks.Range CALLS = new Checks.Range("--max-calls-per-connection", 1, Integer.MAX_VALUE);
    private static final Checks.Range IDLE = new Checks.Range("--idle-timeout", 1, Integer.MAX_VALUE, "seconds");
    /** For a value beyond an int; a given one is checked against --cluster's members, 0..size-1. */
    private static final Checks.Range CLUSTER_INDEX = new Checks.Range("--cluster-index", 0, Integer.MAX_VALUE);
    private static final Checks.Range MAX_MESSAGE = new Checks.Range("--max-message", 1, Integer.MAX_VALUE, "bytes");

    /** The longest {@code --registration-linger}, seconds: a day. */
    static final long MAX_LINGER_SECONDS = 86_400;
    private static final Checks.Range REGISTRATION_LINGER = new Checks.Range("--registration-linger", 0, MAX_LINGER_SECONDS, "seconds");
    private static final Checks.Range SESSION_LINGER = new Checks.Range("--session-linger", 0, MAX_LINGER_SECONDS, "seconds");

    @Option(names = "--registration-linger", paramLabel = "SECONDS", defaultValue = "30",
            description = "seconds the MAPPED path's shard registrations stay after the session that made them ended, so "
                    + "that the next epoch's session does not register (read) every shard again; 0 undoes them with "
                    + "their last session (default: ${DEFAULT-VALUE})")
    long registrationLingerSeconds;

    @Option(names = "--session-linger", paramLabel = "SECONDS", defaultValue = "5",
            description = "seconds a session stays parked after its stream for the same client's next epoch (whose reads "
                    + "its loader starts at once) or after GetFlightInfo for the client's first stream, so that an epoch "
                    + "does not build a new loader; 0 frees each session with its call (default: ${DEFAULT-VALUE})")
    long sessionLingerSeconds;

    @Option(names = "--memory-budget", paramLabel = "SIZE", converter = ByteSize.class,
            description = "native memory for all sessions' loaders together, host and device each, e.g. 16GiB; at most the "
                    + "machine's physical memory (default: 4GiB)")
    Long memoryBudget;

    /** @return the limits asked for on the command line over {@link ServerLimits#defaults()} */
    ServerLimits limits() {
        ServerLimits l = ServerLimits.defaults();
        l = limit(l, CONNECTIONS, maxConnections, ServerLimits::withConnections);
        l = limit(l, CONNECTIONS_PER_ADDRESS, maxConnectionsPerAddress, ServerLimits::withConnectionsPerAddress);
        l = limit(l, AUTH_TIMEOUT, authTimeoutSeconds, (x, v) -> x.withAuthTimeout(java.time.Duration.ofSeconds(v)));
        l = limit(l, IO_THREADS, ioThreads, ServerLimits::withIoThreads);
        l = limit(l, PREFETCH_DEPTH, maxPrefetchDepth, ServerLimits::withMaxPrefetchDepth);
        l = limit(l, BATCH_BYTES, maxBatchBytes, ServerLimits::withMaxBatchBytes);
        l = limit(l, SESSIONS, maxSessions, ServerLimits::withSessions);
        l = limit(l, SESSIONS_PER_CLIENT, maxSessionsPerClient, ServerLimits::withSessionsPerClient);
        l = limit(l, CALLS, maxCallsPerConnection, ServerLimits::withCallsPerConnection);
        l = limit(l, IDLE, idleTimeoutSeconds, (x, v) -> x.withIdleTimeout(java.time.Duration.ofSeconds(v)));
        l = limit(l, MAX_MESSAGE, maxMessage, (x, v) -> x.withMaxMessageBytes(Math.toIntExact(v)));
        if (maxSessionsPerClient != null && maxSessionsPerClient > l.sessions()) {
            throw new IllegalArgumentException("--max-sessions-per-client " + maxSessionsPerClient + " is more than --max-sessions "
                    + l.sessions() + (maxSessions == null ? " (its default)" : "") + ": one client cannot have more streams than the server");
        }
        return memoryBudget == null ? l : l.withMemoryBudget(checkMemoryBudget(memoryBudget));
    }

    /**
     * @return {@code l} with {@code value} set by {@code with}, or {@code l} if not given; a value outside {@code range}, or
     *     one {@link ServerLimits} refuses, is refused naming the option, the value and what is allowed
     */
    private static <T extends Number> ServerLimits limit(ServerLimits l, Checks.Range range, T value,
                                                         java.util.function.BiFunction<ServerLimits, T, ServerLimits> with) {
        if (value == null) {
            return l;
        }
        range.check(value.longValue());
        try {
            return with.apply(l, value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(range.option() + " " + value + ": " + e.getMessage(), e);
        }
    }

    /**
     * The check of a server's {@code --memory-budget}, serve's and serve-bench's: at least 1 byte and at most this
     * machine's physical memory ({@link NativeAllocator#hostMemoryBytes()}), since the budget bounds the sessions' host
     * memory as well as their device memory.
     *
     * @param bytes the budget given, bytes
     * @return {@code bytes}
     * @throws IllegalArgumentException naming {@code --memory-budget}, the value and the machine's physical memory
     */
    static long checkMemoryBudget(long bytes) {
        long physical = NativeAllocator.hostMemoryBytes();
        if (bytes < 1) {
            throw new IllegalArgumentException("--memory-budget must be 1.." + physical + " bytes (this machine's physical memory, "
                    + ByteSize.format(physical) + "), got " + bytes);
        }
        if (bytes > physical) {
            throw new IllegalArgumentException("--memory-budget " + ByteSize.format(bytes) + " (" + bytes + " B) is more than "
                    + "this machine's physical memory, " + ByteSize.format(physical) + " (" + physical + " B): the budget bounds the "
                    + "sessions' host memory too (host and device each)");
        }
        return bytes;
    }

    @Override
    public java.util.List<Checks.Range> ranges() {
        return java.util.List.of(PORT, CONNECTIONS, CONNECTIONS_PER_ADDRESS, AUTH_TIMEOUT, IO_THREADS, PREFETCH_DEPTH, BATCH_BYTES,
                SESSIONS, SESSIONS_PER_CLIENT, CALLS, IDLE, CLUSTER_INDEX, MAX_MESSAGE, REGISTRATION_LINGER, SESSION_LINGER);
    }

    @Override
    public Integer call() throws Exception {
        PORT.check(port); // named as the option, before the server's own 'port must be ...'
        REGISTRATION_LINGER.check(registrationLingerSeconds);
        SESSION_LINGER.check(sessionLingerSeconds);
        PrefetchServer.Builder b = PrefetchServer.builder(root).bind(bind).port(port).limits(limits())
                .registrationLinger(java.time.Duration.ofSeconds(registrationLingerSeconds))
                .sessionLinger(java.time.Duration.ofSeconds(sessionLingerSeconds));
        if (allowSystemRoot) {
            b.allowSystemRoot();
        }
        if (allowHardLinks) {
            b.allowHardLinks();
        }
        if (cluster != null) {
            if (clusterIndex == null) {
                throw new IllegalArgumentException("--cluster needs --cluster-index I (this server's position in the list, from 0)");
            }
            // the members checked first (as part 0), then the index against them, named as the option
            Cluster members = cluster.startsWith("@") ? Cluster.read(Path.of(cluster.substring(1)), 0) : Cluster.parse(cluster, 0);
            try {
                new Checks.Range("--cluster-index", 0, members.size() - 1).check(clusterIndex);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage() + " (this server's position in --cluster " + cluster
                        + (cluster.startsWith("@") ? ": " + members.members() : "") + ")", e);
            }
            b.cluster(new Cluster(members.members(), clusterIndex));
        } else if (clusterIndex != null) {
            throw new IllegalArgumentException("--cluster-index needs --cluster HOST:PORT,...");
        }
        b.token(tokenFile != null ? BearerAuth.read(tokenFile) : BearerAuth.fromEnvironment(System.getenv()));
        if (clientTokens != null) {
            b.clientTokens(BearerAuth.readNamed(clientTokens));
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together: give both or neither");
        }
        if (tlsCert != null) {
            b.tls(tlsCert, tlsKey);
        }
        if (tlsClientCa != null) {
            if (tlsCert == null) {
                throw new IllegalArgumentException("--tls-client-ca needs --tls-cert and --tls-key: client certificates are part of TLS");
            }
            b.tlsClientCa(tlsClientCa);
        }
        if (clusterCa != null) {
            if (cluster == null || tlsCert == null) {
                throw new IllegalArgumentException("--cluster-ca needs --cluster and --tls-cert: it is what a member trusts when it "
                        + "calls the others over TLS");
            }
            b.clusterTrust(clusterCa);
        }
        PrefetchServer server = b.start();
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "gdsloader-serve-shutdown"));
        String host = server.address().getHostString();
        System.out.println("gdsloader: serving " + server.root() + " on " + (host.contains(":") ? "[" + host + "]" : host) + ":" + server.port()
                + (cluster == null ? "" : " as part " + clusterIndex + " of the cluster " + cluster));
        System.out.flush();
        server.awaitClose();
        return 0;
    }
}
