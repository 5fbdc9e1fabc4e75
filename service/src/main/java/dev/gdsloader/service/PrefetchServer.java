package dev.gdsloader.service;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import dev.gdsloader.memory.NativeAllocator;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The standalone prefetch service: serves the datasets under one root directory to {@link PrefetchClient}s
 * over TCP (see {@link Protocol}). Each connection is a session with its own {@code GdsLoader}, which keeps its
 * prefetch depth of batches ready; batches go out with their bytes (host delivery) or as CUDA IPC handles
 * (GPU delivery, same host).
 *
 * <pre>{@code
 * try (PrefetchServer server = PrefetchServer.builder(Path.of("/data")).port(0).start()) {
 *     System.out.println("serving on " + server.port());
 *     server.awaitClose();
 * }
 * }</pre>
 *
 * <p>Ownership: the server owns its two event loop groups, its listening channel, every accepted channel and
 * every session (loader, lent batches); {@link #close()} frees them once. Native memory: the server takes a child
 * of {@link Builder#allocator} (default the process root) and each session a child of that, so every session's
 * loader is bounded by the same budgets ({@link #allocator()} shows what they hold). A client's disconnect frees its
 * session. A request the server refuses (unknown dataset, bad option) is answered with an {@code ERROR} naming
 * what was wrong; the server keeps serving. Dataset names resolve under the root by real paths ({@link DatasetRoot}:
 * a dataset or any file of it that links outside the root is refused), and errors sent to clients carry neither the
 * root's absolute path nor file bytes. Thread-safe.
 */
public final class PrefetchServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(PrefetchServer.class.getName());
    /** How long {@link #close()} waits for sessions to free their loaders, ms (a loader's close waits up to 10 s). */
    static final long CLOSE_SESSIONS_MILLIS = 15_000;

    private final DatasetRoot root;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel serverChannel;
    private final ChannelGroup channels = new DefaultChannelGroup("gdsloader-service", GlobalEventExecutor.INSTANCE);
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicLong sessionIds = new AtomicLong();
    private final NativeAllocator allocator;
    private volatile boolean closed;

    private PrefetchServer(Builder b, DatasetRoot root) throws IOException {
        this.root = root;
        InetAddress address = resolve(b.bind, b.port);
        this.allocator = b.allocator.newChild("prefetch server of " + b.root, NativeAllocator.UNLIMITED,
                NativeAllocator.UNLIMITED);
        this.boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        this.workers = new MultiThreadIoEventLoopGroup(b.ioThreads, NioIoHandler.newFactory());
        try {
            ServerBootstrap sb = new ServerBootstrap().group(boss, workers).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            FrameCodec.install(ch.pipeline());
                            ch.pipeline().addLast("session", new SessionHandler());
                        }
                    });
            this.serverChannel = sb.bind(new InetSocketAddress(address, b.port)).sync().channel();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            shutdownGroups();
            allocator.close();
            throw new IOException("interrupted while binding " + b.bind + ":" + b.port, e);
        } catch (Exception e) { // Netty rethrows the bind's checked java.net.BindException undeclared
            shutdownGroups();
            allocator.close();
            throw new IOException("cannot listen on " + b.bind + ":" + b.port + ": " + bindFailure(e, address, b.port), e);
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

    /** @return why a bind failed, in the user's terms: the port in use, an address not of this machine, or the OS text */
    private static String bindFailure(Exception e, InetAddress address, int port) {
        String os = String.valueOf(e.getMessage());
        if (e instanceof BindException) {
            boolean local;
            try {
                local = address.isAnyLocalAddress() || address.isLoopbackAddress()
                        || NetworkInterface.getByInetAddress(address) != null;
            } catch (SocketException ignored) {
                local = true; // cannot tell: say what the OS said
            }
            if (!local) {
                return address.getHostAddress() + " is not an address of this machine (" + os + ")";
            }
            if (os.contains("in use")) {
                return "port " + port + " is in use (" + os + ")";
            }
        }
        return os;
    }

    /**
     * @param datasetRoot the directory whose datasets clients may open (by paths relative to it); nothing outside
     *     its real path is served ({@link DatasetRoot}); {@code /} or a system directory only with
     *     {@link Builder#allowSystemRoot()}
     * @return a builder: bind 127.0.0.1, port 0 (ephemeral), 2 I/O threads
     */
    public static Builder builder(Path datasetRoot) {
        return new Builder(datasetRoot);
    }

    /** @return the port the server listens on (the one chosen when port 0 was asked for) */
    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** @return the address the server listens on */
    public InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** @return the dataset root, absolute and normalized, as the builder was given it */
    public Path root() {
        return root.path();
    }

    /**
     * @return the server's allocator: a child of {@link Builder#allocator}'s whose children are the sessions';
     *     owned and closed by the server
     */
    public NativeAllocator allocator() {
        return allocator;
    }

    /** @return sessions whose resources (loader, lent batches) are not yet freed: one per open connection */
    public int sessions() {
        return sessions.size();
    }

    /**
     * Blocks until the server is closed (by {@link #close()} from another thread, or its channel failing).
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitClose() throws InterruptedException {
        serverChannel.closeFuture().await();
    }

    /**
     * Stops accepting, closes every connection, frees every session's loader (waiting up to 15 s in all for
     * loaders whose reads are in flight) and shuts the event loops down. Returns within about 20 s; idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        serverChannel.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        channels.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_SESSIONS_MILLIS);
        for (Session s : Set.copyOf(sessions)) {
            s.close();
        }
        boolean allFreed = true;
        for (Session s : Set.copyOf(sessions)) {
            try {
                if (!s.awaitFreed(Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())))) {
                    LOG.warning("gdsloader: session " + s.id() + " did not free its loader in time");
                    allFreed = false;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                allFreed = false;
                break;
            }
        }
        shutdownGroups();
        if (allFreed) {
            try {
                allocator.close();
            } catch (IllegalStateException e) {
                LOG.warning("gdsloader: " + e.getMessage());
            }
        }
    }

    private void shutdownGroups() {
        var a = boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        var b = workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        a.awaitUninterruptibly(3, TimeUnit.SECONDS);
        b.awaitUninterruptibly(3, TimeUnit.SECONDS);
    }

    /** One per connection: creates the session, hands it every frame, closes it when the connection goes. */
    private final class SessionHandler extends SimpleChannelInboundHandler<Frame> {
        private Session session;

        SessionHandler() {
            super(false); // the session releases each frame after handling it
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channels.add(ctx.channel());
            session = new Session(Long.toString(sessionIds.incrementAndGet()), ctx.channel(), root, allocator, sessions::remove);
            sessions.add(session);
            if (closed) {
                ctx.close();
            }
            ctx.fireChannelActive();
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame f) {
            session.submit(f);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            session.close();
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.log(Level.FINE, "gdsloader: connection " + ctx.channel().remoteAddress() + " failed", cause);
            ctx.writeAndFlush(Frame.of(Protocol.ERROR, new Messages.Error("connection refused: " + cause.getMessage(), true)))
                    .addListener(io.netty.channel.ChannelFutureListener.CLOSE);
        }
    }

    /** Configures a {@link PrefetchServer}. Not thread-safe. */
    public static final class Builder {
        private final Path root;
        private String bind = "127.0.0.1";
        private int port;
        private int ioThreads = 2;
        private NativeAllocator allocator = NativeAllocator.root();
        private boolean allowSystemRoot;

        private Builder(Path root) {
            this.root = Objects.requireNonNull(root, "datasetRoot").toAbsolutePath().normalize();
        }

        /**
         * @param address the address to listen on; 127.0.0.1 (loopback only) by default, since the protocol has
         *     no authentication
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
         * @param threads Netty I/O threads (framing and socket writes; loaders run on session threads), &ge; 1
         * @return this
         * @throws IllegalArgumentException if &lt; 1
         */
        public Builder ioThreads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("ioThreads must be >= 1, got " + threads);
            }
            this.ioThreads = threads;
            return this;
        }

        /**
         * @param parent the allocator the server's sessions take their memory from, through a server child
         *     (default: {@link NativeAllocator#root()}); owned by the caller, who closes it after the server
         * @return this
         */
        public Builder allocator(NativeAllocator parent) {
            this.allocator = java.util.Objects.requireNonNull(parent, "allocator");
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
         * Binds and starts serving.
         *
         * @return the running server, owned by the caller
         * @throws IOException if the root is not a directory, or is {@code /} or a system directory without
         *     {@link #allowSystemRoot()}, or the address cannot be bound: one line
         *     {@code cannot listen on ADDRESS:PORT: REASON}, the reason an unknown host, an address not of this machine
         *     or the port in use
         */
        public PrefetchServer start() throws IOException {
            return new PrefetchServer(this, DatasetRoot.of(root, allowSystemRoot));
        }
    }
}
