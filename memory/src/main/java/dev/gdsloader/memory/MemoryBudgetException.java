package dev.gdsloader.memory;

/**
 * A reservation would take an allocator (or one of its ancestors) past its budget. The message names the
 * allocator whose budget it is and its limit, the request (bytes and kind, and for whom), and who holds the
 * rest (its own allocations and each child's outstanding bytes). Nothing was allocated.
 */
public final class MemoryBudgetException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String allocator;
    private final long limit;
    private final long requested;

    /**
     * @param message the full explanation
     * @param allocator name of the allocator whose budget was exceeded
     * @param limit that budget, bytes
     * @param requested bytes asked for
     */
    public MemoryBudgetException(String message, String allocator, long limit, long requested) {
        super(message);
        this.allocator = allocator;
        this.limit = limit;
        this.requested = requested;
    }

    /** @return name of the allocator whose budget was exceeded */
    public String allocator() {
        return allocator;
    }

    /** @return that budget, bytes */
    public long limit() {
        return limit;
    }

    /** @return bytes asked for */
    public long requested() {
        return requested;
    }
}
