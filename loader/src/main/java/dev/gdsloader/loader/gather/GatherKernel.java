package dev.gdsloader.loader.gather;

import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaException;
import dev.gdsloader.cuda.CudaModule;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.HostRegistration;
import dev.gdsloader.cuda.Nvrtc;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The gather kernels, in one place for every user (the MAPPED engine and the benchmarks' gather ceiling): they copy
 * records from arbitrary device-readable addresses (device memory, or host memory the device can read: pinned memory
 * from {@code cudaHostAlloc}, or a mapping registered with {@code cudaHostRegister(..., Mapped)}) into device memory.
 * One warp copies one record or entry at a time (grid-stride), with 16-byte loads and stores where addresses and
 * length allow, 4-byte words where all are multiples of 4, single bytes otherwise; each lane has up to 4 loads in
 * flight before it stores (reads of mapped host memory cross PCIe, about a microsecond each).
 * <ul>
 *   <li>{@code gather_records(src, dst, record_bytes, n)}: record {@code i} of {@code n}, at the address
 *       {@code src[i]}, lands at {@code dst + i * record_bytes} (records of one size, in batch order: 8 bytes of
 *       description per record);</li>
 *   <li>{@code gather(entries, n)}: entry {@code p} = {@code {src, dst, length}} (three unsigned 64-bit values), for
 *       pieces of any length and place; a source and destination equally misaligned still get 16-byte loads for
 *       their body.</li>
 * </ul>
 *
 * <p>{@link #load()} compiles the source with NVRTC for the current device's architecture (once per process and
 * architecture) and loads it on the calling thread's current device. Owns its {@link CudaModule}; {@link #close()}
 * unloads it (idempotent). Launches may come from any thread using the device it was loaded on; the kernels read
 * their sources and write their destinations only in stream order, so the caller keeps both alive and unchanged until
 * the stream has passed the launch.
 */
public final class GatherKernel implements AutoCloseable {
    /** Threads per block: 8 warps, each copying one record or entry at a time. */
    public static final int BLOCK_THREADS = 256;
    /** The most blocks one launch uses; warps then loop over the records (grid-stride). */
    public static final int MAX_BLOCKS = 1 << 16;
    /** Longs per entry of {@code gather}: src, dst, length. */
    public static final int ENTRY_LONGS = 3;

    /** The CUDA C++ source of both kernels (every parameter 64-bit, see {@link CudaModule#launch}). */
    public static final String SOURCE = """
            // a warp copies words [0, bytes / sizeof(T)): each lane loads up to 4 words (lane, +32, +64, +96) before it
            // stores any, so 4 reads per lane are in flight over PCIe at once instead of 1 (a store cannot be moved
            // above the next load by the compiler without knowing that s and d do not overlap)
            #define GATHER_COPY(T, s, d, bytes, lane) { \\
                const T* __restrict__ s_ = (const T*) (s); T* __restrict__ d_ = (T*) (d); \\
                const unsigned long long words_ = (bytes) / sizeof(T); \\
                for (unsigned long long k = (lane); k < words_; k += 128) { \\
                    const bool p1 = k + 32 < words_, p2 = k + 64 < words_, p3 = k + 96 < words_; \\
                    T a0 = s_[k], a1, a2, a3; \\
                    if (p1) a1 = s_[k + 32]; \\
                    if (p2) a2 = s_[k + 64]; \\
                    if (p3) a3 = s_[k + 96]; \\
                    d_[k] = a0; \\
                    if (p1) d_[k + 32] = a1; \\
                    if (p2) d_[k + 64] = a2; \\
                    if (p3) d_[k + 96] = a3; } }

            // record r of n: dst[r * record_bytes, +record_bytes) = bytes at src[r]; one warp per record
            extern "C" __global__ void gather_records(const unsigned long long* src, unsigned char* dst,
                                                      long long record_bytes, long long n) {
                const unsigned int lane = threadIdx.x & 31u;
                const long long warps = ((long long) gridDim.x * blockDim.x) >> 5;
                for (long long r = ((long long) blockIdx.x * blockDim.x + threadIdx.x) >> 5; r < n; r += warps) {
                    const unsigned char* s = (const unsigned char*) src[r];
                    unsigned char* d = dst + r * record_bytes;
                    const unsigned long long all = (unsigned long long) s | (unsigned long long) d
                                                   | (unsigned long long) record_bytes;
                    if ((all & 15ull) == 0) {
                        GATHER_COPY(uint4, s, d, record_bytes, lane)
                    } else if ((all & 3ull) == 0) {
                        GATHER_COPY(unsigned int, s, d, record_bytes, lane)
                    } else {
                        GATHER_COPY(unsigned char, s, d, record_bytes, lane)
                    }
                }
            }

            // entry p = {src, dst, len}: dst[0, len) = src[0, len); one warp per entry
            extern "C" __global__ void gather(const unsigned long long* e, long long n) {
                const unsigned int lane = threadIdx.x & 31u;
                const long long warps = ((long long) gridDim.x * blockDim.x) >> 5;
                for (long long p = ((long long) blockIdx.x * blockDim.x + threadIdx.x) >> 5; p < n; p += warps) {
                    const unsigned long long src = e[3 * p], dst = e[3 * p + 1], len = e[3 * p + 2];
                    const unsigned char* s = (const unsigned char*) src;
                    unsigned char* d = (unsigned char*) dst;
                    if (((src | dst | len) & 15ull) == 0) {
                        GATHER_COPY(uint4, s, d, len, lane)
                    } else if (((src ^ dst) & 15ull) == 0 && len >= 32) {
                        const unsigned long long head = (16 - (src & 15ull)) & 15ull;
                        const unsigned long long body = (len - head) >> 4;
                        for (unsigned long long i = lane; i < head; i += 32) d[i] = s[i];
                        GATHER_COPY(uint4, s + head, d + head, body << 4, lane)
                        for (unsigned long long i = head + (body << 4) + lane; i < len; i += 32) d[i] = s[i];
                    } else if (((src | dst | len) & 3ull) == 0) {
                        GATHER_COPY(unsigned int, s, d, len, lane)
                    } else {
                        for (unsigned long long i = lane; i < len; i += 32) d[i] = s[i];
                    }
                }
            }
            """;

    /** PTX of {@link #SOURCE} per {@code compute_XY} target: NVRTC runs once per process and architecture. */
    private static final Map<String, String> PTX = new ConcurrentHashMap<>();

    private final CudaModule module;

    /** Launches of each kernel with parameter memory made once (no heap per batch); guarded by this. */
    private final CudaModule.Launcher records;
    private final CudaModule.Launcher entryGather;

    private GatherKernel(CudaModule module) {
        this.module = module;
        try {
            this.records = module.launcher("gather_records", 4);
            this.entryGather = module.launcher("gather", 2);
        } catch (RuntimeException e) {
            module.close();
            throw e;
        }
    }

    /**
     * Compiles {@link #SOURCE} for the current device's compute capability (NVRTC, PTX cached per process and
     * architecture) and loads it on the calling thread's current device.
     *
     * @return the loaded kernels, owned by the caller
     * @throws CudaException if CUDA or NVRTC is unavailable, or compilation or loading fails (with NVRTC's log)
     */
    public static GatherKernel load() {
        CudaDevice d = CudaDevice.get(HostRegistration.currentDevice());
        String arch = "--gpu-architecture=compute_" + d.computeMajor() + d.computeMinor();
        return new GatherKernel(CudaModule.load(PTX.computeIfAbsent(arch, a -> Nvrtc.compileToPtx(SOURCE, "gather.cu", a))));
    }

    /**
     * Enqueues {@code gather_records} on {@code stream}: for {@code i < n}, the {@code recordBytes} bytes at the
     * address {@code srcAddrs[i]} are copied to {@code dst + i * recordBytes}.
     *
     * @param srcAddrs device pointer to {@code n} 64-bit source addresses, each readable by the device
     *     ({@code cudaHostGetDevicePointer} of host memory; on 64-bit Linux with unified addressing that is the host
     *     address itself)
     * @param dst device pointer to at least {@code n * recordBytes} bytes
     * @param recordBytes bytes per record, &gt; 0
     * @param n records, &ge; 0 (0 enqueues nothing)
     * @param stream the stream to enqueue on
     * @throws IllegalArgumentException if {@code recordBytes <= 0}, {@code n < 0}, or {@code n * recordBytes}
     *     overflows
     * @throws IllegalStateException if this kernel was closed
     * @throws CudaException if the launch fails (a bad address shows up as an error of a later call on the stream)
     */
    public void launchRecords(long srcAddrs, long dst, long recordBytes, long n, CudaStream stream) {
        if (recordBytes <= 0) {
            throw new IllegalArgumentException("gather: recordBytes must be > 0, got " + recordBytes);
        }
        if (n < 0) {
            throw new IllegalArgumentException("gather: record count must be >= 0, got " + n);
        }
        if (n > Long.MAX_VALUE / recordBytes) {
            throw new IllegalArgumentException("gather: " + n + " records of " + recordBytes + " bytes overflow 64 bits");
        }
        if (n > 0) {
            synchronized (this) {
                records.arg(0, srcAddrs).arg(1, dst).arg(2, recordBytes).arg(3, n).launch(blocks(n), BLOCK_THREADS, stream);
            }
        }
    }

    /**
     * Enqueues {@code gather} on {@code stream}: for each of the {@code n} entries {@code {src, dst, length}} at
     * {@code entries}, the {@code length} bytes at {@code src} are copied to {@code dst} (all device-side addresses).
     *
     * @param entries device pointer to {@code 3 n} unsigned 64-bit values
     * @param n entries, &ge; 0 (0 enqueues nothing)
     * @param stream the stream to enqueue on
     * @throws IllegalArgumentException if {@code n < 0}
     * @throws IllegalStateException if this kernel was closed
     * @throws CudaException if the launch fails
     */
    public void launchEntries(long entries, long n, CudaStream stream) {
        if (n < 0) {
            throw new IllegalArgumentException("gather: entry count must be >= 0, got " + n);
        }
        if (n > 0) {
            synchronized (this) {
                entryGather.arg(0, entries).arg(1, n).launch(blocks(n), BLOCK_THREADS, stream);
            }
        }
    }

    /**
     * @param n records or entries
     * @return blocks a launch for {@code n} uses: one warp each, up to {@link #MAX_BLOCKS} blocks
     */
    static int blocks(long n) {
        long warpsPerBlock = BLOCK_THREADS / 32;
        return (int) Math.max(1, Math.min(MAX_BLOCKS, (n + warpsPerBlock - 1) / warpsPerBlock));
    }

    /** Unloads the module; idempotent. */
    @Override
    public void close() {
        module.close();
    }
}
