/**
 * The prefetch service's protocol on Arrow Flight, everything a server and a client share and the one place it is
 * written down (with service/README.md, the full wire contract): the request, both the {@code FlightDescriptor}
 * command and the {@code Ticket} ({@link dev.gdsloader.service.protocol.Request}, with a cluster's
 * {@link dev.gdsloader.service.protocol.Part}), the protocol version and metadata keys
 * ({@link dev.gdsloader.service.protocol.Protocol}), the Arrow schema of a batch
 * ({@link dev.gdsloader.service.protocol.BatchSchema}), the stream messages
 * ({@link dev.gdsloader.service.protocol.Messages}), the delivery modes
 * ({@link dev.gdsloader.service.protocol.Delivery}), the status codes and which a client retries
 * ({@link dev.gdsloader.service.protocol.ErrorCodes}) and the bearer token
 * ({@link dev.gdsloader.service.protocol.BearerAuth}).
 *
 * <p>The service is three packages: this one, {@code dev.gdsloader.service.server} (a {@code PrefetchServer} runs a
 * loader per stream and delivers its batches as Arrow record batches, {@code DoGet}, or as CUDA IPC handles,
 * {@code DoExchange}) and {@code dev.gdsloader.service.client} (the blocking Java {@code PrefetchClient} a training
 * loop iterates). Server and client depend on this package, never on each other ({@code PackageDependencyTest}); any
 * Arrow Flight client (e.g. {@code pyarrow.flight}) can speak the protocol.
 */
package dev.gdsloader.service.protocol;
