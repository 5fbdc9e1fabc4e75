/**
 * The standalone prefetch service on Arrow Flight: {@link dev.gdsloader.service.PrefetchServer} runs a
 * {@link dev.gdsloader.loader.GdsLoader} per stream (one epoch of one request) and delivers its batches as Arrow
 * record batches ({@code DoGet}, host delivery, zero-copy from the loader's slots) or, on the same host and GPU, as
 * CUDA IPC memory handles of the slot buffers ({@code DoExchange}, GPU delivery, releases coming back);
 * {@link dev.gdsloader.service.PrefetchClient} is the blocking Java client a training loop iterates, and any Arrow
 * Flight client (e.g. {@code pyarrow.flight}) can speak the protocol (service/README.md).
 */
package dev.gdsloader.service;
