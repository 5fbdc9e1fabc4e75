package dev.gdsloader.service.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.loader.LoaderState;
import dev.gdsloader.service.protocol.ErrorCodes;
import dev.gdsloader.service.protocol.Protocol;
import dev.gdsloader.service.protocol.Request;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;

/**
 * One epoch of a {@link PrefetchClient}: its endpoints read in order ({@link Endpoints}), each through the client's
 * {@link ClientDelivery}; a stream that breaks is reopened after its last batch's state ({@link Reconnects}). Not
 * thread-safe: the client's one consumer thread.
 */
final class EpochIterator implements Iterator<RemoteBatch> {
    private final PrefetchClient client;
    private final Request request;
    private final Endpoints endpoints;
    private final ClientDelivery delivery;
    private final Deadlines deadlines;
    private final long reconnectMillis;
    final long epoch;
    /** The endpoint being read ({@link Endpoints#targets()}); {@link #last()} is a state of its stream. */
    private int target;
    /** The state to resume from when no batch of this stream came yet (a saved state), or null. */
    private LoaderState lastState;
    /** The last batch handed out: {@link #last()} is its state, parsed only when asked (a reconnect, a resume). */
    private RemoteBatch lastBatch;
    private boolean ended;
    private ClientDelivery.Stream stream;
    private RemoteBatch fetched;

    /**
     * @param epoch the epoch
     * @param resume the state to resume after (the epoch's), or null for its start
     */
    EpochIterator(PrefetchClient client, Request request, Endpoints endpoints, ClientDelivery delivery, Deadlines deadlines,
                  long reconnectMillis, long epoch, LoaderState resume) {
        this.client = client;
        this.request = request;
        this.endpoints = endpoints;
        this.delivery = delivery;
        this.deadlines = deadlines;
        this.reconnectMillis = reconnectMillis;
        this.epoch = epoch;
        this.lastState = resume;
    }

    /** @return true once the epoch's last endpoint ended */
    boolean ended() {
        return ended;
    }

    @Override
    public boolean hasNext() {
        client.checkOpen();
        if (fetched != null) {
            return true;
        }
        Reconnects reconnects = null;
        while (!ended && fetched == null) {
            if (endpoints.targets().isEmpty()) { // a cluster's rank with no batches in any part
                end();
                break;
            }
            Endpoints.Target t = endpoints.targets().get(target);
            try {
                if (read(t) && reconnects != null) {
                    reconnects.nextEndpoint();
                }
            } catch (FlightRuntimeException e) {
                dropStream();
                if (!ErrorCodes.retryable(e)) {
                    throw new PrefetchServiceException(t.describe() + ": " + e.getMessage(), e, e.status().code());
                }
                if (reconnects == null) {
                    reconnects = new Reconnects(reconnectMillis);
                }
                reconnects.broke(e, t, last());
                endpoints.reconnect(t);
            }
        }
        return fetched != null;
    }

    /**
     * Reads endpoint {@code t}'s next message: a batch becomes {@link #fetched}; the end of the endpoint's stream moves
     * on to the next endpoint (after the last one, the epoch ends).
     *
     * @return true if the endpoint's stream ended and the epoch moved on (the next endpoint's reconnects start over)
     */
    private boolean read(Endpoints.Target t) {
        if (stream == null && last() != null && last().epoch() > epoch) {
            // the state after the endpoint's last batch: nothing left there, no stream to open (an open stream is read
            // to its end: a CUDA_IPC exchange's end message parks it for the next epoch)
            nextTarget();
            return false;
        }
        if (stream == null) {
            open(t);
        }
        JsonNode meta = deadlines.next(stream.reader(), t) ? metadata(stream.reader().metadata()) : null;
        if (meta == null || meta.path(Protocol.END_KEY).asBoolean(false)) {
            // the stream's end (DoGet), or the exchange's end message (CUDA_IPC, protocol 4)
            if (meta != null && stream.endMessage(epoch, endpoints.targets().size() == 1)) {
                stream = null; // kept open for the next epoch
            }
            nextTarget();
            return true;
        }
        fetched = stream.batch(meta);
        lastBatch = fetched;
        lastState = null;
        return false;
    }

    /** Moves on to the next endpoint, or ends the epoch if {@link #target} was the last. */
    private void nextTarget() {
        dropStream();
        if (target + 1 >= endpoints.targets().size()) {
            end();
            return;
        }
        target++;
        lastState = null;
        lastBatch = null;
    }

    private void open(Endpoints.Target t) {
        LoaderState last = last();
        Request r = last != null && last.epoch() == epoch ? request.resumingAfter(last) : request.forEpoch(epoch);
        stream = delivery.open(t, endpoints.client(t), r, last == null);
    }

    /** @return the state after the last batch handed out, or the state resumed from, or null */
    LoaderState last() {
        return lastBatch != null ? lastBatch.state() : lastState;
    }

    private void end() {
        ended = true;
        dropStream();
    }

    /** Ends the stream being read, if any (an exchange completes once its batches are released). */
    void dropStream() {
        if (stream != null) {
            stream.drop();
            stream = null;
        }
    }

    /** Releases the batch fetched by {@link #hasNext()} and not yet handed out by {@link #next()}, if any. */
    void dropFetched() {
        if (fetched != null) {
            fetched.releaseAll();
            fetched = null;
        }
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
}
