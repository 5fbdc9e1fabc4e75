package dev.gdsloader.cuda;

import java.nio.charset.StandardCharsets;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaDeviceProp;

/**
 * A CUDA device and the properties the loader reports and sizes itself by.
 *
 * @param ordinal device ordinal as CUDA numbers it (0-based)
 * @param name marketing name, e.g. "NVIDIA H200"
 * @param totalMemoryBytes device memory in bytes
 * @param computeMajor compute capability major
 * @param computeMinor compute capability minor
 * @param copyEngines number of asynchronous copy engines ({@code asyncEngineCount})
 * @param pciBusId PCI bus id, e.g. "0000:2A:00.0"
 */
public record CudaDevice(int ordinal, String name, long totalMemoryBytes, int computeMajor, int computeMinor,
                         int copyEngines, String pciBusId) {

    /**
     * @return the number of CUDA devices
     * @throws CudaException if CUDA is unavailable
     */
    public static int count() {
        Cuda.ensure();
        return Cuda.availability().deviceCount();
    }

    /**
     * Reads the properties of one device.
     *
     * @param ordinal device ordinal, {@code 0 <= ordinal < count()}
     * @return its properties
     * @throws CudaException if CUDA is unavailable or the ordinal is invalid
     */
    public static CudaDevice get(int ordinal) {
        Cuda.ensure();
        cudaDeviceProp p = new cudaDeviceProp();
        Cuda.check(JCuda.cudaGetDeviceProperties(p, ordinal), "cudaGetDeviceProperties(device " + ordinal + ")");
        String[] bus = {""};
        Cuda.check(JCuda.cudaDeviceGetPCIBusId(bus, 64, ordinal), "cudaDeviceGetPCIBusId(device " + ordinal + ")");
        int len = 0;
        while (len < p.name.length && p.name[len] != 0) {
            len++;
        }
        return new CudaDevice(ordinal, new String(p.name, 0, len, StandardCharsets.UTF_8), p.totalGlobalMem,
                p.major, p.minor, p.asyncEngineCount, bus[0].trim());
    }

    /**
     * One integer attribute of a device ({@code cudaDeviceGetAttribute}), e.g.
     * {@link #HOST_REGISTER_SUPPORTED} or {@link #HOST_REGISTER_READ_ONLY_SUPPORTED} (1 = yes, 0 = no).
     *
     * @param ordinal device ordinal
     * @param attribute a {@code cudaDeviceAttr} value
     * @return the attribute's value
     * @throws CudaException if CUDA is unavailable, the ordinal is invalid or the driver does not know the attribute
     */
    public static int attribute(int ordinal, int attribute) {
        Cuda.ensure();
        int[] v = {0};
        Cuda.check(JCuda.cudaDeviceGetAttribute(v, attribute, ordinal),
                "cudaDeviceGetAttribute(attribute " + attribute + ", device " + ordinal + ")");
        return v[0];
    }

    /**
     * {@code cudaDevAttrHostRegisterSupported} = 99: the device can register host memory with
     * {@code cudaHostRegister}. The number is from the CUDA runtime's {@code driver_types.h} ({@code enum cudaDeviceAttr},
     * CUDA 11+), the same in JCuda's {@code cudaDeviceAttr} and CuPy's {@code runtime.pxd}.
     */
    public static final int HOST_REGISTER_SUPPORTED = jcuda.runtime.cudaDeviceAttr.cudaDevAttrHostRegisterSupported;

    /**
     * {@code cudaDevAttrHostRegisterReadOnlySupported} = 113 (added in CUDA 11.1; same source as
     * {@link #HOST_REGISTER_SUPPORTED}): the device can register read-only host memory (a {@code PROT_READ} mapping)
     * with the {@code cudaHostRegisterReadOnly} flag.
     */
    public static final int HOST_REGISTER_READ_ONLY_SUPPORTED =
            jcuda.runtime.cudaDeviceAttr.cudaDevAttrHostRegisterReadOnlySupported;

    /**
     * Makes device {@code ordinal} current for the calling thread ({@code cudaSetDevice}) and creates
     * its primary context now ({@code cudaFree(NULL)}), so that other libraries sharing the primary
     * context (cuFile) find it initialised.
     *
     * @param ordinal device ordinal
     * @throws CudaException if CUDA is unavailable or the ordinal is invalid
     */
    public static void makeCurrent(int ordinal) {
        Cuda.ensure();
        Cuda.check(JCuda.cudaSetDevice(ordinal), "cudaSetDevice(" + ordinal + ")");
        Cuda.check(JCuda.cudaFree(new jcuda.Pointer()), "cudaFree(NULL) to create the primary context of GPU " + ordinal);
    }

    /**
     * @return the calling thread's current device ({@code cudaGetDevice})
     * @throws CudaException if CUDA is unavailable
     */
    public static int current() {
        Cuda.ensure();
        int[] d = {0};
        Cuda.check(JCuda.cudaGetDevice(d), "cudaGetDevice");
        return d[0];
    }

    /**
     * Makes device {@code ordinal} current for the calling thread ({@code cudaSetDevice} alone: cheap, for switching
     * between devices whose primary contexts exist, e.g. issuing one group's copies; {@link #makeCurrent} the first
     * time).
     *
     * @param ordinal device ordinal
     * @throws CudaException if CUDA is unavailable or the ordinal is invalid
     */
    public static void use(int ordinal) {
        Cuda.ensure();
        Cuda.check(JCuda.cudaSetDevice(ordinal), "cudaSetDevice(" + ordinal + ")");
    }

    /**
     * Free and total device memory of the current device ({@code cudaMemGetInfo}).
     *
     * @return {@code {freeBytes, totalBytes}}
     * @throws CudaException if CUDA is unavailable
     */
    public static long[] memoryInfo() {
        Cuda.ensure();
        long[] free = {0};
        long[] total = {0};
        Cuda.check(JCuda.cudaMemGetInfo(free, total), "cudaMemGetInfo");
        return new long[] {free[0], total[0]};
    }
}
