package dev.gdsloader.service.server;

import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.service.protocol.Delivery;
import java.util.Arrays;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The server side of a {@link Delivery} mode: the Flight RPC its streams use, the loader options it needs, the schema
 * GetFlightInfo announces and how a session's epoch is streamed. One class per mode ({@link HostStream},
 * {@link IpcExchange}), chosen in {@link #of}, the one place a new mode is added on this side. Stateless; thread-safe.
 */
interface ServerDelivery {
    /** The Flight RPC a mode streams through. */
    enum Rpc {
        /** {@code DoGet}: the server sends, the client reads. */
        DO_GET("DoGet"),
        /** {@code DoExchange}: messages both ways. */
        DO_EXCHANGE("DoExchange");

        private final String label;

        Rpc(String label) {
            this.label = label;
        }

        /** @return the modes streamed through this RPC, for messages (e.g. {@code HOST}) */
        String modes() {
            return Arrays.stream(Delivery.values()).filter(d -> of(d).rpc() == this).map(Delivery::name)
                    .collect(Collectors.joining(", "));
        }

        @Override
        public String toString() {
            return label;
        }
    }

    /**
     * @param delivery a mode
     * @return its server side
     */
    static ServerDelivery of(Delivery delivery) {
        return switch (delivery) {
            case HOST -> HostStream.DELIVERY;
            case CUDA_IPC -> IpcExchange.DELIVERY;
        };
    }

    /** @return the RPC the mode's streams use */
    Rpc rpc();

    /**
     * @param requested the request's loader options
     * @return the options the session's loader is built with (e.g. path AUTO made HOST)
     * @throws IllegalArgumentException naming the mode and the option, if the mode cannot deliver with them
     */
    LoaderOptions options(LoaderOptions requested);

    /**
     * @param loader the session's loader, built
     * @return why the mode cannot deliver this loader's batches (e.g. not in GPU memory), or null if it can
     */
    String refusal(GdsLoader loader);

    /**
     * @param loader a session's loader
     * @return the schema of the mode's record batches, announced by GetFlightInfo
     */
    Schema schema(GdsLoader loader);

    /**
     * Streams the session's epoch (a CUDA_IPC exchange: every epoch the client asks for on it) to its end.
     *
     * @param session the stream's session, held by the caller
     * @param fromClient the client's messages (DoExchange), or null (DoGet)
     * @param toClient the stream to the client
     * @param closing true once the server closes
     * @throws InterruptedException if interrupted while waiting for the client
     */
    void serve(Session session, FlightStream fromClient, ServerStreamListener toClient, BooleanSupplier closing)
            throws InterruptedException;

    /** @return whether a session that streamed its epoch to the end is parked for the client's next epoch's stream */
    boolean parksAfterEpoch();
}
