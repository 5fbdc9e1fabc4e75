package dev.gdsloader.loader.slot;

import dev.gdsloader.memory.Closeables;

/**
 * The resources one slot owns, freed together once: each engine's slot class keeps one and calls {@link #close()}
 * from its own. Thread-safe.
 */
public final class SlotResources {
    private final String what;
    private final AutoCloseable[] parts;
    private boolean closed;

    /**
     * @param what the slot, for messages (e.g. "bounce slot")
     * @param parts its resources in the order they are freed (nulls are skipped)
     */
    public SlotResources(String what, AutoCloseable... parts) {
        this.what = what;
        this.parts = parts.clone();
    }

    /**
     * Frees every part once, whatever earlier parts threw; later calls do nothing.
     *
     * @throws IllegalStateException naming the slot if a part failed to free (the others were still freed)
     */
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Exception first = Closeables.closeAll(parts);
        if (first != null) {
            throw new IllegalStateException(what + ": freeing failed: " + first.getMessage(), first);
        }
    }
}
