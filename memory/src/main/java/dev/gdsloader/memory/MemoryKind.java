package dev.gdsloader.memory;

/**
 * What an {@link NativeAllocator} allocation is, and which of its budgets it charges.
 */
public enum MemoryKind {
    /** GPU memory ({@code cudaMalloc}): charges the device budget. */
    DEVICE("device", Budget.DEVICE),
    /** Page-locked host memory from {@code cudaHostAlloc}: charges the host budget. */
    PINNED("pinned", Budget.HOST),
    /** Plain (pageable) page-aligned host memory, e.g. the host path's slots: charges the host budget. */
    HOST("host", Budget.HOST),
    /**
     * Host memory page-locked in place by {@code cudaHostRegister} (memory not already charged as
     * {@link #HOST}, such as mapped file pages): charges the host budget.
     */
    HOST_REGISTERED("host-registered", Budget.HOST),
    /**
     * Device memory registered with cuFile ({@code cuFileBufRegister}): counted, but charges no budget, since
     * its bytes are already charged as {@link #DEVICE}.
     */
    CUFILE_REGISTERED("cufile-registered", Budget.NONE);

    /** The budgets an allocator has. */
    public enum Budget {
        /** Host memory: pinned, plain and registered, bytes. */
        HOST,
        /** GPU memory, bytes. */
        DEVICE,
        /** Charges no budget (counted only). */
        NONE
    }

    private final String label;
    private final Budget budget;

    MemoryKind(String label, Budget budget) {
        this.label = label;
        this.budget = budget;
    }

    /** @return the kind's name in messages, e.g. "pinned" */
    public String label() {
        return label;
    }

    /** @return the budget it charges */
    public Budget budget() {
        return budget;
    }
}
