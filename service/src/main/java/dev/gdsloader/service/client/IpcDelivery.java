package dev.gdsloader.service.client;

import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.protocol.Request;
import org.apache.arrow.flight.FlightClient.ExchangeReaderWriter;
import org.apache.arrow.flight.FlightDescriptor;

/**
 * {@link Delivery#CUDA_IPC} on the client: each endpoint's stream is a {@code DoExchange} ({@link IpcStream}: handles
 * mapped in this process, releases sent back). An exchange whose epoch ended stays open to stream the next epoch
 * ({@code {"next": E+1}}: the same server session, buffers and handles) when the client reads one endpoint; it is
 * finished when the next epoch does not continue it. The consumer's thread only.
 */
final class IpcDelivery implements ClientDelivery {
    private final ClientContext context;
    /** An exchange whose epoch {@link #parkedEpoch} ended and that stays open for the next one, or null. */
    private IpcStream parked;
    private long parkedEpoch;

    IpcDelivery(ClientContext context) {
        this.context = context;
    }

    @Override
    public Stream open(Endpoints.Target t, Connection c, Request r, boolean fromStart) {
        IpcStream p = parked;
        parked = null;
        if (p != null && fromStart && r.epoch() == parkedEpoch + 1 && p.continueWith(r.epoch())) {
            return p; // the same exchange streams this epoch
        }
        if (p != null) {
            p.readerEnded(); // not continued: finished once its batches are back
        }
        ExchangeReaderWriter exchange = c.flight().doExchange(FlightDescriptor.command(t.ticket(r)));
        return new IpcStream(exchange, context, this);
    }

    /**
     * Keeps an exchange whose end message came open for the next epoch.
     *
     * @param s the exchange
     * @param epoch the epoch that ended
     */
    void park(IpcStream s, long epoch) {
        parked = s;
        parkedEpoch = epoch;
    }

    @Override
    public void close() {
        if (parked != null) {
            parked.readerEnded(); // every batch is back: unmaps, half-closes, reads to the server's completion
            parked = null;
        }
    }
}
