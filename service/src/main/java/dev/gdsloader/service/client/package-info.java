/**
 * The Java client of the prefetch service: {@link dev.gdsloader.service.client.PrefetchClient}, a blocking
 * {@code Iterable} of {@link dev.gdsloader.service.client.RemoteBatch}es a training loop iterates epoch by epoch, over
 * one server or a cluster's endpoints, reconnecting and resuming after a break; each delivery mode is one class
 * ({@code ClientDelivery}). Speaks {@code dev.gdsloader.service.protocol}; never depends on the server package.
 */
package dev.gdsloader.service.client;
