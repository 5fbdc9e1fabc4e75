package dev.gdsloader.service.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.protocol.Request;

/**
 * The client side of a {@link Delivery} mode: how an endpoint's stream is opened and how each of its messages becomes
 * a {@link RemoteBatch}. One class per mode ({@link HostDelivery}, {@link IpcDelivery}), chosen in {@link #of}, the one
 * place a new mode is added on this side. One per client; the consumer's thread only.
 */
interface ClientDelivery extends AutoCloseable {
    /**
     * @param delivery the mode
     * @param context what the client's deliveries share
     * @return the mode's client side, owned by the client
     */
    static ClientDelivery of(Delivery delivery, ClientContext context) {
        return switch (delivery) {
            case HOST -> new HostDelivery(context);
            case CUDA_IPC -> new IpcDelivery(context);
        };
    }

    /**
     * Opens an endpoint's stream.
     *
     * @param t the endpoint
     * @param c the connection to its server
     * @param r the request: its epoch, from its start or resuming after a state
     * @param fromStart whether {@code r} starts the epoch (no state to resume after)
     * @return the open stream, owned by the caller
     */
    Stream open(Endpoints.Target t, Connection c, Request r, boolean fromStart);

    /** Finishes what the delivery keeps between epochs (a CUDA_IPC exchange kept for the next epoch). Idempotent. */
    @Override
    void close();

    /** One endpoint's open stream. */
    interface Stream {
        /** @return what its messages are read through */
        StreamReader reader();

        /**
         * @param meta the app_metadata of the reader's current message (not an end message)
         * @return the message's batch, handed to the consumer (one reference)
         */
        RemoteBatch batch(JsonNode meta);

        /**
         * The epoch's end message came ({@code {"end": true, ...}}).
         *
         * @param epoch the epoch that ended
         * @param keepForNextEpoch whether the stream may stay open to stream the next epoch (a single endpoint)
         * @return true if the stream stays open for the next epoch (the caller then forgets it without {@link #drop})
         */
        boolean endMessage(long epoch, boolean keepForNextEpoch);

        /** Ends the stream: closes its reader, or finishes the exchange once its batches are back. */
        void drop();
    }
}
