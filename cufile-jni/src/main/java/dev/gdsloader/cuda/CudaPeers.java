package dev.gdsloader.cuda;

import jcuda.runtime.JCuda;
import jcuda.runtime.cudaDeviceP2PAttr;
import jcuda.runtime.cudaError;

/**
 * Peer access between the GPUs of one process: whether one device can read and write another's memory directly
 * ({@code cudaDeviceCanAccessPeer}), what the driver says of the pair ({@code cudaDeviceGetP2PAttribute}), and turning
 * it on and off ({@code cudaDeviceEnablePeerAccess}, which is per context: device {@code d}'s primary context may then
 * address {@code peer}'s memory, and copies between them go over the link instead of through host memory).
 *
 * <p>Stateless; thread-safe as the CUDA runtime is. Calls that need a current device set it and restore the caller's.
 */
public final class CudaPeers {
    private CudaPeers() {
    }

    /** {@code cudaDevP2PAttrPerformanceRank}: a relative rank of the link's performance (lower is better). */
    public static final int PERFORMANCE_RANK = cudaDeviceP2PAttr.cudaDevP2PAttrPerformanceRank;
    /** {@code cudaDevP2PAttrAccessSupported}: 1 where peer access is supported. */
    public static final int ACCESS_SUPPORTED = cudaDeviceP2PAttr.cudaDevP2PAttrAccessSupported;
    /** {@code cudaDevP2PAttrNativeAtomicSupported}: 1 where atomics over the link are native. */
    public static final int NATIVE_ATOMIC_SUPPORTED = cudaDeviceP2PAttr.cudaDevP2PAttrNativeAtomicSupported;

    /**
     * @param device the device whose kernels and copies would reach {@code peer}
     * @param peer the device whose memory they would reach
     * @return whether {@code device} can access {@code peer}'s memory directly; false for {@code device == peer}
     *     (a device is not its own peer)
     * @throws CudaException if CUDA is unavailable or an ordinal is invalid
     */
    public static boolean canAccessPeer(int device, int peer) {
        Cuda.ensure();
        int[] v = {0};
        Cuda.check(JCuda.cudaDeviceCanAccessPeer(v, device, peer), "cudaDeviceCanAccessPeer(" + device + ", " + peer + ")");
        return v[0] != 0;
    }

    /**
     * @param attribute {@link #PERFORMANCE_RANK}, {@link #ACCESS_SUPPORTED} or {@link #NATIVE_ATOMIC_SUPPORTED}
     * @param src the source device
     * @param dst the destination device, not {@code src}
     * @return the attribute's value for the pair
     * @throws CudaException if CUDA is unavailable, an ordinal is invalid or {@code src == dst}
     *     ({@code cudaErrorInvalidDevice})
     */
    public static int attribute(int attribute, int src, int dst) {
        Cuda.ensure();
        int[] v = {0};
        Cuda.check(JCuda.cudaDeviceGetP2PAttribute(v, attribute, src, dst),
                "cudaDeviceGetP2PAttribute(" + cudaDeviceP2PAttr.stringFor(attribute) + ", " + src + ", " + dst + ")");
        return v[0];
    }

    /**
     * Lets {@code device}'s context access {@code peer}'s memory ({@code cudaDeviceEnablePeerAccess}). Access stays on
     * until {@link #disable} or the process ends.
     *
     * @param device the accessing device
     * @param peer the accessed device
     * @return true if this call turned it on, false if it was on already
     * @throws CudaException if the pair cannot be peers ({@code cudaErrorPeerAccessUnsupported}), or on another error
     */
    public static boolean enable(int device, int peer) {
        Cuda.ensure();
        int previous = CudaDevice.current();
        try {
            CudaDevice.use(device);
            int rc = JCuda.cudaDeviceEnablePeerAccess(peer, 0);
            if (rc == cudaError.cudaErrorPeerAccessAlreadyEnabled) {
                JCuda.cudaGetLastError(); // not sticky, but the runtime keeps it as the last error: clear it
                return false;
            }
            Cuda.check(rc, "cudaDeviceEnablePeerAccess(device " + device + " to peer " + peer + ")");
            return true;
        } finally {
            CudaDevice.use(previous);
        }
    }

    /**
     * Turns {@code device}'s access to {@code peer}'s memory off ({@code cudaDeviceDisablePeerAccess}); copies between
     * them then go through host memory.
     *
     * @param device the accessing device
     * @param peer the accessed device
     * @return true if this call turned it off, false if it was off
     * @throws CudaException on another error
     */
    public static boolean disable(int device, int peer) {
        Cuda.ensure();
        int previous = CudaDevice.current();
        try {
            CudaDevice.use(device);
            int rc = JCuda.cudaDeviceDisablePeerAccess(peer);
            if (rc == cudaError.cudaErrorPeerAccessNotEnabled) {
                JCuda.cudaGetLastError();
                return false;
            }
            Cuda.check(rc, "cudaDeviceDisablePeerAccess(device " + device + " to peer " + peer + ")");
            return true;
        } finally {
            CudaDevice.use(previous);
        }
    }
}
