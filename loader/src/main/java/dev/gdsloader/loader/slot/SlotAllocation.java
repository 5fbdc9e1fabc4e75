package dev.gdsloader.loader.slot;

import dev.gdsloader.memory.Closeables;
import java.util.ArrayList;
import java.util.List;

/**
 * What one slot's allocation has made so far, so that a half-built slot never leaks: an engine's
 * {@code allocateSlot} records each resource with {@link #add} and, if a later allocation throws (an exception
 * or an error such as running out of host memory), {@link #abandon} frees them in reverse order before the
 * throwable propagates. Not thread-safe; used by one thread while a slot is built.
 */
public final class SlotAllocation {
    private final List<AutoCloseable> made = new ArrayList<>();

    /** An empty record of one slot's allocations; {@link #build} makes one for each slot. */
    public SlotAllocation() {
    }

    /**
     * @param resource a freshly allocated resource (not null)
     * @param <T> its type
     * @return {@code resource}, now recorded
     */
    public <T extends AutoCloseable> T add(T resource) {
        made.add(java.util.Objects.requireNonNull(resource, "resource"));
        return resource;
    }

    /**
     * Frees everything recorded, newest first, adding any failure to {@code cause} as suppressed.
     *
     * @param cause what made the allocation fail
     * @return {@code cause}, to rethrow
     */
    public Throwable abandon(Throwable cause) {
        AutoCloseable[] reverse = new AutoCloseable[made.size()];
        for (int i = 0; i < reverse.length; i++) {
            reverse[i] = made.get(reverse.length - 1 - i);
        }
        made.clear();
        Exception e = Closeables.closeAll(reverse);
        if (e != null) {
            cause.addSuppressed(e);
        }
        return cause;
    }

    /**
     * Builds a slot: runs {@code recipe} and, if it throws, frees what it had allocated before rethrowing.
     *
     * @param recipe the allocations
     * @param <S> the slot type
     * @param <E> the checked exception the recipe may throw
     * @return the slot, owned by the caller
     * @throws E what the recipe threw, after freeing its allocations
     */
    public static <S, E extends Exception> S build(Recipe<S, E> recipe) throws E {
        SlotAllocation a = new SlotAllocation();
        try {
            return recipe.allocate(a);
        } catch (Throwable t) {
            a.abandon(t);
            throw t;
        }
    }

    /**
     * The allocations of one slot.
     *
     * @param <S> the slot type
     * @param <E> the checked exception they may throw ({@link RuntimeException} where none)
     */
    @FunctionalInterface
    public interface Recipe<S, E extends Exception> {
        /**
         * @param owner records each allocation
         * @return the slot
         * @throws E if an allocation fails
         */
        S allocate(SlotAllocation owner) throws E;
    }
}
