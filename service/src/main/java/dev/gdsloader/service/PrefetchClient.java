package dev.gdsloader.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Shuffle;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A blocking client of a {@link PrefetchServer}, for training loops: one session (one loader on the server),
 * iterated epoch by epoch.
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
 * <p>Ownership: the client owns its event loop group (one daemon I/O thread, so a process that fails without
 * closing the client still exits), its channel, the frames it has received but not yet
 * handed out, and its CUDA IPC mappings (opened once per handle with {@code cudaIpcOpenMemHandle}, closed with
 * {@code cudaIpcCloseMemHandle} at {@link #close()}; CUDA cannot open a handle in the process that created
 * it, so the client must be another process than the server for {@link Delivery#CUDA_IPC}). Each batch handed
 * out is owned by the caller. Not thread-safe: one consumer thread (Netty's I/O thread only fills a queue).
 */
public final class PrefetchClient implements Iterable<RemoteBatch>, AutoCloseable {
    private static final Object DISCONNECTED = new Object();

    private final String peer;
    private final EventLoopGroup group;
    private final Channel channel;
    private final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private final long timeoutMillis;
    private final Map<String, CudaIpc.DevicePointer> mappings = new HashMap<>();
    private final int device;
    private Messages.Opened opened;
    private boolean inEpoch;
    /** A batch {@code hasNext()} fetched that {@code next()} has not handed out yet; owned by the client. */
    private RemoteBatch fetched;
    private boolean closed;

    private PrefetchClient(Builder b) {
        this.peer = b.host + ":" + b.port;
        this.timeoutMillis = b.timeout.toMillis();
        this.device = b.device;
        // a daemon I/O thread: a training script that fails without closing the client must still exit
        this.group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("gdsloader-client", true), NioIoHandler.newFactory());
        try {
            Bootstrap bs = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            FrameCodec.install(ch.pipeline());
                            ch.pipeline().addLast("inbox", new Inbox());
                        }
                    });
            var connect = bs.connect(b.host, b.port);
            if (!connect.awaitUninterruptibly(timeoutMillis) || !connect.isSuccess()) {
                connect.channel().close();
                throw new PrefetchServiceException("cannot connect to prefetch server " + peer + ": "
                        + (connect.cause() != null ? connect.cause().getMessage() : "timed out after " + timeoutMillis + " ms"), connect.cause());
            }
            this.channel = connect.channel();
        } catch (RuntimeException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
            throw e;
        }
    }

    /**
     * @param host server host (loopback for {@link Delivery#CUDA_IPC})
     * @param port server port
     * @return a builder with defaults: dataset ".", the loader options of {@link LoaderOptions#defaults()} (no
     *     shuffle, rank 0 of 1, EXACT_ONCE, path AUTO, prefetch depth 4, ...), HOST delivery, 60 s timeout;
     *     batch size must be set
     */
    public static Builder builder(String host, int port) {
        return new Builder(host, port);
    }

    /** @return the delivery the server chose */
    public Delivery delivery() {
        return Delivery.valueOf(opened.delivery());
    }

    /** @return the read path the server's loader took, e.g. {@code HOST}, {@code BOUNCE}, {@code GDS} */
    public String pathTaken() {
        return opened.pathTaken();
    }

    /** @return batches per epoch on this rank */
    public int batchesPerEpoch() {
        return opened.batchesPerEpoch();
    }

    /** @return slots the server keeps for this session: hold fewer batches than this */
    public int slots() {
        return opened.slots();
    }

    /**
     * Starts the next epoch (the first call: epoch 0). Each {@code hasNext()} that needs a batch asks the server
     * for one and blocks until it arrives.
     *
     * @return an iterator over the epoch's batches
     * @throws IllegalStateException if the client is closed or the previous epoch was not iterated to its end
     */
    @Override
    public Iterator<RemoteBatch> iterator() {
        if (closed) {
            throw new IllegalStateException("client of " + peer + " is closed");
        }
        if (inEpoch) {
            throw new IllegalStateException("the previous epoch was not finished: iterate it to its end first");
        }
        inEpoch = true;
        return new Iterator<>() {
            private boolean ended;

            @Override
            public boolean hasNext() {
                if (closed) {
                    throw new IllegalStateException("client of " + peer + " is closed");
                }
                if (fetched == null && !ended) {
                    send(Protocol.NEXT, new Messages.Next());
                    Frame f = await(Protocol.BATCH, Protocol.END);
                    if (f.type().equals(Protocol.END)) {
                        f.release();
                        ended = true;
                        inEpoch = false;
                    } else {
                        fetched = toBatch(f);
                    }
                }
                return fetched != null;
            }

            @Override
            public RemoteBatch next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("epoch ended");
                }
                RemoteBatch b = fetched;
                fetched = null;
                return b;
            }
        };
    }

    private RemoteBatch toBatch(Frame f) {
        Delivery d = delivery();
        Messages.BatchHeader header;
        try {
            header = Protocol.JSON.treeToValue(f.body(), Messages.BatchHeader.class);
        } catch (JsonProcessingException e) {
            f.release();
            throw new PrefetchServiceException("malformed BATCH from " + peer + ": " + e.getOriginalMessage(), e);
        }
        RemoteBatch b = new RemoteBatch(this, f, header, d);
        try {
            List<RemoteColumn> cols = new ArrayList<>();
            for (Messages.Column c : header.columns()) {
                DType t = DType.valueOf(c.dtype());
                if (d == Delivery.HOST) {
                    if (c.offset() < 0 || c.bytes() < 0 || c.offset() + c.bytes() > f.content().readableBytes()) {
                        throw new PrefetchServiceException("column '" + c.name() + "' (" + c.bytes() + " bytes at " + c.offset()
                                + ") lies outside the " + f.content().readableBytes() + " byte payload");
                    }
                    cols.add(new RemoteColumn(b, c.name(), t, c.shape(), c.bytes(),
                            f.content().slice(f.content().readerIndex() + (int) c.offset(), (int) c.bytes()), null, 0));
                } else {
                    cols.add(new RemoteColumn(b, c.name(), t, c.shape(), c.bytes(), null, map(c), c.offset()));
                }
            }
            b.columns(cols);
            return b;
        } catch (RuntimeException e) {
            b.close();
            throw e instanceof PrefetchServiceException p ? p : new PrefetchServiceException("bad BATCH from " + peer + ": " + e, e);
        }
    }

    private CudaIpc.DevicePointer map(Messages.Column c) {
        return mappings.computeIfAbsent(c.ipcHandle(), h -> {
            CudaDevice.makeCurrent(device);
            return CudaIpc.open(h);
        });
    }

    void releaseRemote(long id) {
        if (!closed && channel.isActive()) {
            send(Protocol.RELEASE, new Messages.Release(id));
        }
    }

    private void open(Messages.Open o) {
        send(Protocol.OPEN, o);
        Frame f = await(Protocol.OPENED);
        try {
            opened = Protocol.JSON.treeToValue(f.body(), Messages.Opened.class);
        } catch (JsonProcessingException e) {
            throw new PrefetchServiceException("malformed OPENED from " + peer + ": " + e.getOriginalMessage(), e);
        } finally {
            f.release();
        }
    }

    private void send(String type, Object body) {
        if (!channel.isActive()) {
            throw new PrefetchServiceException("connection to prefetch server " + peer + " is closed");
        }
        channel.writeAndFlush(Frame.of(type, body));
    }

    /** Waits for a frame of one of {@code types}; an ERROR becomes an exception naming the server's reason. */
    private Frame await(String... types) {
        Object o;
        try {
            o = inbox.poll(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PrefetchServiceException("interrupted waiting for prefetch server " + peer, e);
        }
        if (o == null) {
            throw new PrefetchServiceException("prefetch server " + peer + " sent nothing for " + timeoutMillis + " ms");
        }
        if (o == DISCONNECTED) {
            inbox.add(DISCONNECTED);
            throw new PrefetchServiceException("prefetch server " + peer + " closed the connection");
        }
        if (o instanceof Throwable t) {
            throw new PrefetchServiceException("connection to prefetch server " + peer + " failed: " + t, t);
        }
        Frame f = (Frame) o;
        if (f.version() != Protocol.VERSION && !f.type().equals(Protocol.ERROR)) {
            f.release();
            throw new PrefetchServiceException("prefetch server " + peer + " speaks protocol version " + f.version()
                    + ", this client version " + Protocol.VERSION);
        }
        if (f.type().equals(Protocol.ERROR)) {
            String msg = f.body().path("message").asText("(no message)");
            f.release();
            throw new PrefetchServiceException("prefetch server " + peer + ": " + msg);
        }
        for (String t : types) {
            if (t.equals(f.type())) {
                return f;
            }
        }
        f.release();
        throw new PrefetchServiceException("prefetch server " + peer + " sent " + f.type() + ", expected one of " + List.of(types));
    }

    /**
     * Closes the connection (the server frees the session), releases frames not handed out, closes the CUDA IPC
     * mappings and shuts the event loop down; returns within about 5 s. Batches still held become invalid.
     * Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (fetched != null) {
            fetched.close();
            fetched = null;
        }
        // unmap before disconnecting: the server frees the slot buffers when the connection goes
        RuntimeException first = null;
        for (CudaIpc.DevicePointer p : mappings.values()) {
            try {
                CudaIpc.close(p);
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        mappings.clear();
        channel.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
        for (Object o; (o = inbox.poll()) != null; ) {
            if (o instanceof Frame f) {
                f.release();
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** The pipeline's last handler: queues frames (ownership passes to the consumer thread) and failures. */
    private final class Inbox extends SimpleChannelInboundHandler<Frame> {
        Inbox() {
            super(false);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame f) {
            inbox.add(f);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            inbox.add(DISCONNECTED);
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            inbox.add(cause);
            ctx.close();
        }
    }

    /**
     * Configures and opens a {@link PrefetchClient}: the server-side loader's settings are one {@link LoaderOptions}
     * (sent as JSON in {@code OPEN}), which the loader setters here replace with checked copies, so an invalid
     * value throws {@link IllegalArgumentException} at the setter naming the option. Not thread-safe.
     */
    public static final class Builder {
        private final String host;
        private final int port;
        private String dataset = ".";
        private LoaderOptions options = LoaderOptions.defaults();
        private Delivery delivery = Delivery.HOST;
        private int device;
        private Duration timeout = Duration.ofSeconds(60);

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
         * Replaces every loader option at once; the setters below change single fields of them. The server's
         * loader runs with these options, its device being {@link LoaderOptions#device()} on the server.
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
         * @param path the server loader's read path
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
         * @param timeout longest wait for the server (connect, and each reply)
         * @return this
         */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * Connects and opens the session.
         *
         * @return the client, owned by the caller
         * @throws PrefetchServiceException naming what was wrong: the connection, or the server's refusal
         *     (unknown dataset, an option the server refuses such as a batch size not set)
         */
        public PrefetchClient open() {
            boolean gpu = delivery != Delivery.HOST && Cuda.availability().available();
            PrefetchClient c = new PrefetchClient(this);
            try {
                c.open(new Messages.Open(dataset, Messages.Open.options(options), delivery.name(), gpu));
                return c;
            } catch (RuntimeException e) {
                c.close();
                throw e;
            }
        }
    }
}
