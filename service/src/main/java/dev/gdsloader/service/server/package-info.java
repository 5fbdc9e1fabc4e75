/**
 * The prefetch server: {@link dev.gdsloader.service.server.PrefetchServer} serves the datasets under one root over
 * Arrow Flight, one {@code GdsLoader} per stream (a session), each batch delivered through the request's delivery
 * mode ({@code ServerDelivery}: HOST as zero-copy Arrow record batches, CUDA_IPC as IPC handles of the slots). Speaks
 * {@code dev.gdsloader.service.protocol}; never depends on the client package.
 */
package dev.gdsloader.service.server;
