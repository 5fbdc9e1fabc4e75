package dev.gdsloader.service.client;

import org.apache.arrow.memory.BufferAllocator;

/**
 * What a client's deliveries share, all owned by the {@link PrefetchClient}: its Arrow allocator (received batches,
 * messages sent), its deadlines, the CUDA device IPC handles are opened on, and the batches it handed out.
 *
 * @param allocator the client's Arrow allocator
 * @param deadlines the deadline of every wait for the server
 * @param device the CUDA device of this process on which IPC handles are opened
 * @param held the batches handed out and not released yet
 */
record ClientContext(BufferAllocator allocator, Deadlines deadlines, int device, HeldBatches held) {
}
