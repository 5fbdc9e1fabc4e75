package dev.gdsloader.cufile;

/**
 * The cuFile driver's properties ({@code CUfileDrvProps_t}, from {@code cuFileDriverGetProperties}).
 *
 * @param nvfsMajor nvidia-fs kernel driver major version; 0 when the module is not loaded
 * @param nvfsMinor nvidia-fs minor version
 * @param maxDirectIoBytes largest single direct I/O cuFile issues, bytes
 * @param pollThresholdBytes I/O size at or below which cuFile polls for completion, bytes
 * @param maxDeviceCacheBytes GPU bounce-buffer cache per GPU, bytes
 * @param perBufferCacheBytes size of one GPU bounce buffer, bytes
 * @param maxPinnedBytes largest GPU memory cuFile pins, bytes
 * @param maxBatchIoSize most entries in one batch I/O submission
 */
public record CuFileDriverProperties(int nvfsMajor, int nvfsMinor, long maxDirectIoBytes, long pollThresholdBytes,
                                     long maxDeviceCacheBytes, long perBufferCacheBytes, long maxPinnedBytes,
                                     int maxBatchIoSize) {
    /** @return true when the nvidia-fs kernel module answered (true GPUDirect DMA is possible) */
    public boolean nvfsLoaded() {
        return nvfsMajor > 0;
    }
}
