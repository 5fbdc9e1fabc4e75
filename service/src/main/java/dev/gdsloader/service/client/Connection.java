package dev.gdsloader.service.client;

import dev.gdsloader.service.protocol.BearerAuth;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.netty.channel.ChannelFactory;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightGrpcUtils;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.grpc.NettyClientBuilder;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A client's connection to one server: a gRPC channel built by Flight's own {@link NettyClientBuilder} (TLS as Flight
 * sets it up), with this client's HTTP/2 flow-control window, the transport of {@link ClientTransport} (its event
 * loops, composing receive buffers and 1 MiB DATA frames) and, where set, an interceptor adding the bearer token to
 * every call, and the {@link FlightClient} over it. {@code DoGet} streams go through {@link DoGetReader} on
 * {@link #channel()}, every other call through {@link #flight()}.
 *
 * <p>Ownership: owns the Flight client, which owns the channel (closing it shuts the channel down). The event loops
 * are {@link ClientTransport#GROUP}, gRPC's executor its shared one (daemon threads both). Thread-safe as gRPC's
 * channel is.
 *
 * @param flight the Flight client over {@link #channel}
 * @param channel the gRPC channel
 */
record Connection(FlightClient flight, ManagedChannel channel) implements AutoCloseable {

    /**
     * @param allocator the client's allocator (Flight's client takes a child of it)
     * @param at the server
     * @param tlsRoots PEM file of the certificates to trust, or null for plaintext
     * @param clientCertificate {PEM certificate chain, PEM PKCS#8 key} this client presents to a server that asks for
     *     one (mutual TLS), or null for none; used only with {@code tlsRoots}
     * @param token the bearer token ({@link BearerAuth#check}ed), or null for none
     * @param window the HTTP/2 flow-control window of this connection's streams and of the connection, bytes: what the
     *     server may send ahead of what this client has consumed; fixed (gRPC's auto-tuning is off)
     * @return the connection (nothing is sent before the first call)
     * @throws PrefetchServiceException if the trusted certificates or the client certificate cannot be read
     */
    static Connection open(BufferAllocator allocator, Location at, Path tlsRoots, Path[] clientCertificate, String token, int window) {
        NettyClientBuilder fb = new NettyClientBuilder(allocator, at);
        if (tlsRoots != null) {
            try {
                // read at build(): handed over in memory
                fb.useTls().trustedCertificates(new ByteArrayInputStream(Files.readAllBytes(tlsRoots)));
            } catch (IOException e) {
                throw new PrefetchServiceException("cannot read the trusted certificates " + tlsRoots + ": " + e.getMessage(), e, null);
            }
            if (clientCertificate != null) {
                try {
                    fb.clientCertificate(new ByteArrayInputStream(Files.readAllBytes(clientCertificate[0])),
                            new ByteArrayInputStream(Files.readAllBytes(clientCertificate[1])));
                } catch (IOException e) {
                    throw new PrefetchServiceException("cannot read the client certificate " + clientCertificate[0] + " or its key "
                            + clientCertificate[1] + ": " + e.getMessage(), e, null);
                }
            }
        }
        NettyChannelBuilder cb = fb.build().flowControlWindow(window);
        // no copy into the HTTP/2 decoder's buffer, 1 MiB DATA frames (ClientTransport)
        cb.eventLoopGroup(ClientTransport.GROUP).channelFactory((ChannelFactory<NioSocketChannel>) ClientTransport::newChannel);
        if (token != null) {
            Metadata headers = new Metadata();
            headers.put(Metadata.Key.of(Auth2Constants.AUTHORIZATION_HEADER, Metadata.ASCII_STRING_MARSHALLER),
                    Auth2Constants.BEARER_PREFIX + token);
            cb.intercept(MetadataUtils.newAttachHeadersInterceptor(headers));
        }
        ManagedChannel channel = cb.build();
        return new Connection(FlightGrpcUtils.createFlightClient(allocator, channel), channel);
    }

    /**
     * Closes the Flight client and with it the channel (waiting for gRPC as Flight does); an interrupt while waiting
     * stops the wait and is kept as the thread's interrupt status.
     */
    @Override
    public void close() {
        try {
            flight.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
