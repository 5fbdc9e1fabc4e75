package dev.gdsloader.service.client;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;

/**
 * A client's deadline on every wait for its server ({@code PrefetchClient.Builder.timeout}): a stream that sends
 * nothing for that long is cancelled. Owns a timer thread (a daemon, {@code gdsloader-client-deadline}) until
 * {@link #close()}. Thread-safe.
 */
final class Deadlines implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Deadlines.class.getName());

    private final long timeoutMillis;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon()
            .name("gdsloader-client-deadline").unstarted(r));

    /** @param timeoutMillis the longest wait for a message, ms */
    Deadlines(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    /** @return the longest wait for a message, ms */
    long timeoutMillis() {
        return timeoutMillis;
    }

    /**
     * {@code stream.next()} within the deadline: the stream is cancelled if nothing comes in time.
     *
     * @param stream the stream
     * @param t the endpoint it reads, for the message
     * @return what {@code next()} returned
     * @throws PrefetchServiceException TIMED_OUT, naming the endpoint, if the deadline passed
     * @throws FlightRuntimeException the stream's own error otherwise
     */
    boolean next(StreamReader stream, Endpoints.Target t) {
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
     * Reads {@code r} to the server's completion within the deadline (closing earlier would cancel the call); a message
     * that still comes is ignored.
     *
     * @param r an exchange's reader after its end message
     */
    void readToCompletion(FlightStream r) {
        ScheduledFuture<?> f = timer.schedule(() -> r.cancel("no completion for " + timeoutMillis + " ms", null),
                timeoutMillis, TimeUnit.MILLISECONDS);
        try {
            while (r.next()) {
                LOG.log(Level.FINE, "gdsloader: a message after the exchange's end message, ignored");
            }
        } finally {
            f.cancel(false);
        }
    }

    /** Stops the timer. Idempotent. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
