package dev.gdsloader.cuda;

/**
 * The host refused to page-lock memory: {@code cudaHostAlloc} failed for a {@link PinnedBuffer}. A caller that can do
 * with less pinned memory (a prefetch ring that runs with the slots it has) catches this type; any other
 * {@link CudaException} is not about pinned host memory.
 *
 * <p>The message is {@link CudaException}'s: {@code cudaHostAlloc(N bytes of pinned host memory) failed: NAME (CODE)}.
 */
public class PinnedAllocationException extends CudaException {
    private static final long serialVersionUID = 1L;
    private final long bytes;

    /**
     * @param bytes the size asked for
     * @param code the {@code cudaError_t} value {@code cudaHostAlloc} returned
     * @param errorName its symbolic name
     */
    public PinnedAllocationException(long bytes, int code, String errorName) {
        super("cudaHostAlloc(" + bytes + " bytes of pinned host memory)", code, errorName);
        this.bytes = bytes;
    }

    /** @return bytes of pinned host memory that were asked for */
    public long bytes() {
        return bytes;
    }
}
