package dev.gdsloader.service.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaException;
import dev.gdsloader.cuda.CudaIpc;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.formats.DType;
import dev.gdsloader.service.protocol.BatchSchema;
import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.protocol.Messages;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.FlightClient.ExchangeReaderWriter;

/**
 * The client side of one {@code DoExchange} (one or more epochs of one server session): each message's metadata names
 * the columns' IPC memory handles, mapped here once per handle, and the server's interprocess ready event, opened once
 * per handle and handed to the batch ({@link RemoteBatch#awaitOn}); releases go out on the exchange's writer. A release
 * after a consumer's stream carries this exchange's own interprocess event, recorded on that stream after the stream
 * waited for the event's previous record (so its last record follows every release's work, whichever stream it ran
 * on); the server's slot waits for it. Once the server's end message came and every batch is back it unmaps the
 * session's slot buffers and destroys the events, and only then half-closes and reads to the server's completion (the
 * server frees the buffers after that: CUDA forbids freeing memory another process still maps). The consumer's
 * thread only.
 */
final class IpcStream implements ClientDelivery.Stream {
    private static final Logger LOG = Logger.getLogger(IpcStream.class.getName());

    private final ExchangeReaderWriter exchange;
    private final StreamReader reader;
    private final ClientContext context;
    private final IpcDelivery delivery;
    /** Mappings of the session's slot buffers (their device addresses), opened once per handle. */
    private final Map<String, Long> mappings = new HashMap<>();
    /** The session's interprocess ready events, opened once per handle. */
    private final Map<String, CudaIpc.OpenedEvent> events = new HashMap<>();
    /** This exchange's release event, recorded on consumers' streams; null before the first or where refused. */
    private CudaEvent releaseEvent;
    private String releaseHandle;
    private boolean releaseRecorded;
    /** The driver refused an interprocess event here: releases after a stream synchronize it first. */
    private boolean noReleaseEvent;
    private int outstanding;
    private boolean readerEnded;
    private boolean endReceived;
    private boolean done;

    IpcStream(ExchangeReaderWriter exchange, ClientContext context, IpcDelivery delivery) {
        this.exchange = exchange;
        this.reader = StreamReader.of(exchange.getReader());
        this.context = context;
        this.delivery = delivery;
    }

    @Override
    public StreamReader reader() {
        return reader;
    }

    @Override
    public RemoteBatch batch(JsonNode meta) {
        long[] records = BatchSchema.records(exchange.getReader().getRoot());
        long id = meta.path("id").asLong();
        outstanding++;
        RemoteBatch b;
        try {
            b = new RemoteBatch(meta.path("epoch").asLong(), meta.path("index").asLong(), records,
                    meta.path("padding").asInt(), Delivery.CUDA_IPC, meta.path("state"), readyEvent(meta), (batch, stream) -> {
                        release(id, stream);
                        context.held().remove(batch);
                    });
        } catch (RuntimeException e) {
            release(id, null); // the exchange can still complete
            throw e;
        }
        try {
            b.columns(mapColumns(b, meta));
        } catch (RuntimeException e) {
            b.close(); // released to the server: the exchange can still complete
            throw e;
        }
        context.held().add(b);
        return b;
    }

    /** @return the server's ready event of the batch (opened at its first use), or null where it sent none */
    private CudaIpc.OpenedEvent readyEvent(JsonNode meta) {
        JsonNode event = meta.get("event");
        if (event == null || event.isNull()) {
            return null;
        }
        return events.computeIfAbsent(event.asText(), h -> {
            CudaDevice.makeCurrent(context.device());
            return CudaIpc.openEventHandle(Base64.getDecoder().decode(h));
        });
    }

    /** Maps each column's slot buffer (once per handle). */
    private List<RemoteColumn> mapColumns(RemoteBatch b, JsonNode meta) {
        List<RemoteColumn> cols = new ArrayList<>();
        for (JsonNode c : meta.path("columns")) {
            long[] shape = new long[c.path("shape").size()];
            for (int i = 0; i < shape.length; i++) {
                shape[i] = c.path("shape").get(i).asLong();
            }
            long base = mappings.computeIfAbsent(c.path("ipcHandle").asText(), h -> {
                CudaDevice.makeCurrent(context.device());
                return CudaIpc.openMemHandle(Base64.getDecoder().decode(h));
            });
            cols.add(RemoteColumn.device(b, c.path("name").asText(), DType.valueOf(c.path("dtype").asText()), shape,
                    c.path("bytes").asLong(), base + c.path("offset").asLong()));
        }
        return cols;
    }

    /**
     * @param id the batch's id
     * @param consumerStream the stream whose work must run before the server reuses the slot, or null (done now)
     */
    private void release(long id, CudaStream consumerStream) {
        String event = consumerStream == null || done ? null : recordRelease(consumerStream);
        outstanding--;
        if (!done) {
            try {
                exchange.getWriter().putMetadata(Messages.utf8(context.allocator(), Messages.release(id, event)));
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "gdsloader: release of batch " + id + " not sent", e);
            }
        }
        finishIfDone();
    }

    /**
     * Records this exchange's release event on {@code s}, after {@code s} waited for its previous record; where the
     * driver refuses interprocess events, synchronizes {@code s} instead.
     *
     * @return the event's handle, base64, or null if {@code s} was synchronized
     */
    private String recordRelease(CudaStream s) {
        if (releaseEvent == null && !noReleaseEvent) {
            try {
                CudaDevice.makeCurrent(context.device());
                CudaEvent e = CudaEvent.createInterprocess();
                try {
                    releaseHandle = Base64.getEncoder().encodeToString(CudaIpc.eventHandle(e));
                } catch (CudaException x) {
                    e.close();
                    throw x;
                }
                releaseEvent = e;
            } catch (CudaException e) {
                LOG.log(Level.INFO, "gdsloader: no interprocess CUDA event for releases (" + e.getMessage()
                        + "); each release(stream) synchronizes its stream");
                noReleaseEvent = true;
            }
        }
        if (releaseEvent == null) {
            s.synchronize();
            return null;
        }
        if (releaseRecorded) {
            s.waitFor(releaseEvent); // after every earlier release's work: the server waits on the last record only
        }
        releaseEvent.record(s);
        releaseRecorded = true;
        return releaseHandle;
    }

    @Override
    public boolean endMessage(long epoch, boolean keepForNextEpoch) {
        endReceived = true; // on finishing, read to the server's completion instead of cancelling
        if (keepForNextEpoch) {
            delivery.park(this, epoch);
        }
        return keepForNextEpoch;
    }

    @Override
    public void drop() {
        readerEnded(); // the exchange completes once its batches are released
    }

    /**
     * Asks the server for {@code epoch} on this exchange ({@code {"next": epoch}}) after its end message.
     *
     * @return false (nothing sent; finish it and open another) if the exchange is done or the send fails
     */
    boolean continueWith(long epoch) {
        if (done || !endReceived) {
            return false;
        }
        try {
            exchange.getWriter().putMetadata(Messages.utf8(context.allocator(), Messages.next(epoch)));
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "gdsloader: continuing an exchange with epoch " + epoch + " failed", e);
            return false;
        }
        endReceived = false;
        return true;
    }

    /** The reader is done with the exchange: it finishes once every batch is back. */
    void readerEnded() {
        readerEnded = true;
        finishIfDone();
    }

    private void finishIfDone() {
        if (!readerEnded || outstanding != 0 || done) {
            return;
        }
        done = true;
        for (long p : mappings.values()) {
            try {
                CudaIpc.closeMemHandle(p);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "gdsloader: cudaIpcCloseMemHandle failed", e);
            }
        }
        mappings.clear();
        for (CudaIpc.OpenedEvent ev : events.values()) {
            closeQuietly(ev);
        }
        events.clear();
        try {
            exchange.getWriter().completed(); // after the end message, the server completes once it sees this
            if (endReceived) {
                // read to the server's completion (closing earlier would cancel the call), within the deadline; an
                // exchange abandoned before its end is cancelled by the close below instead
                context.deadlines().readToCompletion(exchange.getReader());
            }
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "gdsloader: finishing an exchange", e);
        } finally {
            closeQuietly(exchange);
            if (releaseEvent != null) {
                closeQuietly(releaseEvent); // the server, done, waits on it no more
                releaseEvent = null;
            }
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.log(Level.FINE, "gdsloader: closing " + c, e);
        }
    }
}
