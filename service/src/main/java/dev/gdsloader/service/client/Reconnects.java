package dev.gdsloader.service.client;

import dev.gdsloader.loader.LoaderState;
import dev.gdsloader.service.protocol.ErrorCodes;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.FlightRuntimeException;

/**
 * Reconnecting a broken stream (service/README.md, "Faults"): a stream that broke with a retryable status
 * ({@link ErrorCodes#retryable(FlightRuntimeException)}: a server gone, or a connection it refused at its connection
 * limits) is reopened on a new connection every {@value #PAUSE_MILLIS} ms, resuming after the
 * last batch handed out, for up to the client's reconnect timeout from the first break; then the error names the
 * endpoint, what ended the stream and what retrying met. One per wait for a batch that met a break; the consumer's
 * thread only.
 */
final class Reconnects {
    private static final Logger LOG = Logger.getLogger(Reconnects.class.getName());
    /** Pause between two attempts, ms. */
    static final long PAUSE_MILLIS = 200;

    private final long reconnectMillis;
    /** What first ended the stream: said when reconnecting gives up (e.g. "server shutting down"). */
    private FlightRuntimeException broke;
    /** When reconnecting the current endpoint gives up ({@link System#nanoTime()}), or 0 before its first break. */
    private long deadline;

    /** @param reconnectMillis how long an endpoint is retried, ms */
    Reconnects(long reconnectMillis) {
        this.reconnectMillis = reconnectMillis;
    }

    /** The epoch moved on to another endpoint: its breaks get a deadline of their own. */
    void nextEndpoint() {
        deadline = 0;
    }

    /**
     * A stream broke with a retryable status: logs the first break, throws once the deadline has passed, else waits
     * {@value #PAUSE_MILLIS} ms before the caller reconnects.
     *
     * @param e what the stream ended with
     * @param t the endpoint
     * @param last the state the stream resumes after, or null (its start)
     * @throws PrefetchServiceException naming the endpoint and the failures, if reconnecting for the timeout did not help,
     *     or if interrupted
     */
    void broke(FlightRuntimeException e, Endpoints.Target t, LoaderState last) {
        long now = System.nanoTime();
        if (broke == null) {
            broke = e;
        }
        if (deadline == 0) {
            deadline = now + TimeUnit.MILLISECONDS.toNanos(reconnectMillis);
            LOG.log(Level.INFO, "gdsloader: stream from " + t.describe() + " broke (" + e.getMessage()
                    + "); reconnecting and resuming after " + (last == null ? "the start" : last.toJson()));
        } else if (now > deadline) {
            throw new PrefetchServiceException(t.describe() + ": " + gaveUp(broke, e)
                    + " (reconnecting for " + reconnectMillis + " ms did not help)", e, broke.status().code());
        }
        pause(PAUSE_MILLIS);
    }

    /**
     * @param first the failure that started the retries
     * @param last the last one
     * @return what retrying met, for the error thrown when it gives up: the first failure, then the last if it differs
     */
    @SuppressWarnings("ReferenceEquality") // the same exception object, not an equal one
    static String gaveUp(FlightRuntimeException first, FlightRuntimeException last) {
        return first == last ? ErrorCodes.withCause(last) : ErrorCodes.withCause(first) + "; then " + ErrorCodes.withCause(last);
    }

    /**
     * @param millis how long to wait
     * @throws PrefetchServiceException if interrupted (the interrupt status kept)
     */
    static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PrefetchServiceException("interrupted while reconnecting", e, null);
        }
    }
}
