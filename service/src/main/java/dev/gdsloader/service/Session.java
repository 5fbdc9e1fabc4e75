package dev.gdsloader.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.ColumnView;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.HostReadback;
import dev.gdsloader.memory.NativeAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One client connection's session: its {@link GdsLoader}, the batches lent to the client and the CUDA IPC
 * handles of the slot buffers. Everything here runs on the session's own thread (the loader is single-consumer
 * and its {@code next()} blocks on I/O, which must never happen on a Netty event loop); the event loop only
 * hands frames over with {@link #submit}. Frames submitted are released here, once.
 */
final class Session {
    private static final Logger LOG = Logger.getLogger(Session.class.getName());

    private final String id;
    private final Channel channel;
    private final DatasetRoot root;
    private final Consumer<Session> onClosed;
    private final ExecutorService thread;
    /** The session's memory: its loader's and read-back's allocations, bounded by the server's allocator. */
    private final NativeAllocator allocator;
    private final CountDownLatch freed = new CountDownLatch(1);
    // session-thread state
    private GdsLoader loader;
    private Delivery delivery;
    private java.util.Iterator<Batch> epoch;
    private long epochNumber = -1;
    private long servedInEpoch;
    private long nextId;
    private int pendingNext;
    private final Map<Long, Batch> lent = new LinkedHashMap<>();
    private final Map<DeviceBuffer, String> handles = new IdentityHashMap<>();
    private HostReadback readback;
    private boolean closed;

    Session(String id, Channel channel, DatasetRoot root, NativeAllocator serverAllocator, Consumer<Session> onClosed) {
        this.id = id;
        this.channel = channel;
        this.root = root;
        this.onClosed = onClosed;
        this.allocator = serverAllocator.newChild("session " + id + " (" + channel.remoteAddress() + ")",
                NativeAllocator.UNLIMITED, NativeAllocator.UNLIMITED);
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "gdsloader-session-" + id);
            t.setDaemon(true);
            return t;
        });
    }

    String id() {
        return id;
    }

    /** Hands a frame to the session thread, which releases it; released here if the session is gone. */
    void submit(Frame f) {
        try {
            thread.execute(() -> {
                try {
                    handle(f);
                } finally {
                    f.release();
                }
            });
        } catch (RejectedExecutionException e) {
            f.release();
        }
    }

    /** Frees the loader and everything lent, on the session thread, once; returns at once. */
    void close() {
        try {
            thread.execute(this::free);
        } catch (RejectedExecutionException e) {
            // already closing
        }
        thread.shutdown();
    }

    /** @return true if the session's resources were freed within the timeout */
    boolean awaitFreed(long millis) throws InterruptedException {
        return freed.await(millis, TimeUnit.MILLISECONDS);
    }

    private void handle(Frame f) {
        if (closed) {
            return;
        }
        if (f.version() != Protocol.VERSION) {
            fail("protocol version " + f.version() + " is not supported: this server speaks version " + Protocol.VERSION, true);
            return;
        }
        try {
            switch (f.type()) {
                case Protocol.OPEN -> open(body(f, Messages.Open.class,
                        "{\"dataset\": \"NAME\", \"options\": {\"batchSize\": N, ...}}"));
                case Protocol.NEXT -> {
                    if (loader == null) {
                        fail("NEXT before OPEN: open a session first", false);
                        return;
                    }
                    pendingNext++;
                    serve();
                }
                case Protocol.RELEASE -> release(body(f, Messages.Release.class, "{\"id\": BATCH_ID}").id());
                default -> fail("unknown message type '" + f.type() + "': expected OPEN, NEXT or RELEASE", false);
            }
        } catch (JsonProcessingException e) {
            fail("malformed " + f.type() + " message: " + e.getOriginalMessage(), false);
        } catch (IllegalArgumentException e) {
            fail(e.getMessage(), false);
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "gdsloader: session " + id + " failed", e);
            fail(f.type() + " failed: " + e, false);
        } catch (Error e) {
            // e.g. OutOfMemoryError building the loader: answer, then close the connection, which frees the session
            LOG.log(Level.SEVERE, "gdsloader: session " + id + " failed", e);
            fail(f.type() + " failed: " + e + "; the server closes this session", true);
        }
    }

    /** @return the frame's body as {@code type}; refused, naming the body expected, when absent or not an object */
    private static <T> T body(Frame f, Class<T> type, String expected) throws JsonProcessingException {
        if (f.body() == null || !f.body().isObject()) {
            throw new IllegalArgumentException(f.type() + " has " + (f.body() == null || f.body().isMissingNode() ? "no body"
                    : "a body that is not a JSON object") + ": expected \"body\": " + expected);
        }
        return Protocol.JSON.treeToValue(f.body(), type);
    }

    private void open(Messages.Open o) throws IOException {
        if (loader != null) {
            throw new IllegalArgumentException("session " + id + " is already open: one OPEN per connection");
        }
        Path dir = root.resolve(o.dataset());
        Delivery wanted = option("delivery", o.delivery(), Delivery.class, Delivery.HOST);
        GdsLoader.Builder b = GdsLoader.builder(dir).options(o.loaderOptions()).allocator(allocator);
        GdsLoader l;
        try {
            l = b.build();
        } catch (IOException e) {
            LOG.log(Level.INFO, "gdsloader: session " + id + ": dataset '" + o.dataset() + "' cannot be opened", e);
            throw new IllegalArgumentException("dataset '" + o.dataset() + "' is not a readable dataset: " + e.getMessage(), e);
        }
        try {
            root.requireInside(l.dataset(), o.dataset()); // what the loader opened, checked once more
        } catch (IOException | RuntimeException e) {
            l.close();
            throw e;
        }
        boolean onDevice = l.pathTaken().onDevice();
        Delivery chosen = switch (wanted) {
            case HOST -> Delivery.HOST;
            case CUDA_IPC -> Delivery.CUDA_IPC;
            case AUTO -> onDevice && o.clientHasGpu() && isLoopback() ? Delivery.CUDA_IPC : Delivery.HOST;
        };
        if (chosen == Delivery.CUDA_IPC && !onDevice) {
            l.close();
            throw new IllegalArgumentException("delivery CUDA_IPC needs batches in GPU memory, but the loader took the "
                    + l.pathTaken() + " path (" + l.pathReason() + "): ask for HOST delivery or a device path");
        }
        loader = l;
        delivery = chosen;
        channel.writeAndFlush(Frame.of(Protocol.OPENED, new Messages.Opened(id, chosen.name(), l.pathTaken().name(),
                l.pathReason(), l.batchesPerEpoch(), l.slots())));
    }

    private static <E extends Enum<E>> E option(String name, String value, Class<E> type, E fallback) {
        if (value == null) {
            return fallback;
        }
        try {
            return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad option '" + name + "': '" + value + "' is not one of "
                    + Arrays.toString(type.getEnumConstants()));
        }
    }

    private boolean isLoopback() {
        return channel.remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null && a.getAddress().isLoopbackAddress();
    }

    /** Answers pending NEXTs while the loader can give a batch without waiting for a slot the client holds. */
    private void serve() {
        while (pendingNext > 0 && canAdvance()) {
            pendingNext--;
            if (epoch == null) {
                epoch = loader.iterator();
                epochNumber++;
                servedInEpoch = 0;
            }
            if (!epoch.hasNext()) {
                channel.writeAndFlush(Frame.of(Protocol.END, new Messages.End(epochNumber, servedInEpoch)));
                epoch = null;
                continue;
            }
            Batch b = epoch.next();
            servedInEpoch++;
            send(b);
        }
    }

    /**
     * The loader fills the next batch into whichever slot is free (its ring is a queue of free slots), so
     * {@code next()} can only wait forever if the client holds every slot; a new epoch needs every batch back.
     */
    private boolean canAdvance() {
        return epoch == null ? lent.isEmpty() : lent.size() < loader.slots();
    }

    /**
     * Sends a batch, taking it over: a CUDA_IPC batch is lent until the client's RELEASE; every other outcome closes
     * it here, a failure too (an Error such as no direct memory for the payload included), so its slot comes back.
     */
    private void send(Batch b) {
        boolean lentOut = false;
        try {
            long idNow = nextId++;
            List<Messages.Column> cols = new ArrayList<>();
            if (delivery == Delivery.CUDA_IPC) {
                b.readyEvent().ifPresent(CudaEvent::synchronize); // the client reads the memory on its own streams
                for (ColumnView c : b.columns()) {
                    DeviceBuffer buf = c.deviceBuffer().orElseThrow();
                    String h = handles.computeIfAbsent(buf, CudaIpc::handleOf);
                    cols.add(new Messages.Column(c.name(), c.dtype().name(), c.shape(), c.bytes(), c.deviceOffset(), h, buf.device()));
                }
                lent.put(idNow, b);
                lentOut = true;
                channel.writeAndFlush(Frame.of(Protocol.BATCH, header(b, idNow, cols)));
                return;
            }
            long total = b.bytes();
            if (total > Protocol.MAX_FRAME_BYTES - Protocol.MAX_HEADER_BYTES) {
                throw new IllegalArgumentException(b.describe() + " has " + total + " bytes, more than a frame carries ("
                        + (Protocol.MAX_FRAME_BYTES - Protocol.MAX_HEADER_BYTES) + "): use a smaller batch size or CUDA_IPC delivery");
            }
            ByteBuf payload = channel.alloc().directBuffer((int) total);
            try {
                for (ColumnView c : b.columns()) {
                    cols.add(new Messages.Column(c.name(), c.dtype().name(), c.shape(), c.bytes(), payload.writerIndex(), null, -1));
                    if (c.onDevice()) {
                        download(b, c, payload);
                    } else {
                        payload.writeBytes(c.hostSegment().asByteBuffer());
                    }
                }
            } catch (RuntimeException | Error e) {
                payload.release();
                throw e;
            }
            channel.writeAndFlush(Frame.of(Protocol.BATCH, header(b, idNow, cols), payload))
                    .addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
        } finally {
            if (!lentOut) {
                b.close();
            }
        }
    }

    private static Messages.BatchHeader header(Batch b, long id, List<Messages.Column> cols) {
        return new Messages.BatchHeader(id, b.epoch(), b.index(), b.recordIndices(), b.paddingCount(), cols);
    }

    /** Device path with host delivery: the column comes down through a pinned staging buffer. */
    private void download(Batch b, ColumnView c, ByteBuf payload) {
        if (readback == null) {
            readback = new HostReadback(Math.max(4096, c.bytes()), true, allocator);
        }
        readback.await(b);
        payload.writeBytes(readback.bytes(c).asByteBuffer());
    }

    private void release(long batchId) {
        Batch b = lent.remove(batchId);
        if (b == null) {
            throw new IllegalArgumentException("RELEASE of batch id " + batchId + ", which this session has not lent (or was released already)");
        }
        b.close();
        serve();
    }

    /** Answers ERROR; the message goes through {@link DatasetRoot#forClients} (no root path, no file bytes). */
    private void fail(String message, boolean fatal) {
        var f = channel.writeAndFlush(Frame.of(Protocol.ERROR, new Messages.Error(root.forClients(message), fatal)));
        if (fatal) {
            f.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void free() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (Batch b : lent.values()) {
                b.close();
            }
            lent.clear();
            handles.clear();
            if (loader != null) {
                loader.close();
            }
            if (readback != null) {
                readback.close();
            }
            allocator.close(); // throws, listing it, if the session's memory did not all come back
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "gdsloader: session " + id + " did not close cleanly", e);
        } finally {
            loader = null;
            onClosed.accept(this); // first: whoever awaits "freed" must also see the session gone from the count
            freed.countDown();
        }
    }
}
