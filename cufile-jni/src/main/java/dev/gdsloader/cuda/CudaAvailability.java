package dev.gdsloader.cuda;

/**
 * Whether CUDA can be used in this process, and if not, why.
 *
 * @param available true when JCuda loaded, a driver answered and at least one device exists
 * @param reason "ok", or one line naming the cause (no driver, no GPU, library not loadable)
 * @param deviceCount number of CUDA devices, 0 when unavailable
 * @param driverVersion CUDA driver API version as {@code 1000 * major + 10 * minor} (13000 = 13.0), 0 if unknown
 * @param runtimeVersion version of the CUDA runtime JCuda carries, same encoding, 0 if unknown
 */
public record CudaAvailability(boolean available, String reason, int deviceCount, int driverVersion,
                               int runtimeVersion) {

    static CudaAvailability unavailable(String reason) {
        return new CudaAvailability(false, reason, 0, 0, 0);
    }

    /**
     * Formats a version in {@code 1000 * major + 10 * minor} encoding.
     *
     * @param v the encoded version
     * @return e.g. "13.0", or "n/a" for 0
     */
    public static String format(int v) {
        return v == 0 ? "n/a" : (v / 1000) + "." + (v % 1000) / 10;
    }
}
