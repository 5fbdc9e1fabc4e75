package dev.gdsloader.service.client;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The batches a client handed out and that are not released yet, so that closing the client releases them. The
 * consumer's thread only.
 */
final class HeldBatches {
    private final Set<RemoteBatch> held = new LinkedHashSet<>();

    /** @param b a batch handed out */
    void add(RemoteBatch b) {
        held.add(b);
    }

    /** @param b a batch whose last reference was released */
    void remove(RemoteBatch b) {
        held.remove(b);
    }

    /** Releases every batch still held, whatever its reference count (their memory becomes invalid). */
    void releaseAll() {
        for (RemoteBatch b : List.copyOf(held)) {
            b.releaseAll();
        }
    }
}
