package dev.gdsloader.bench;

import dev.gdsloader.cuda.CudaException;
import dev.gdsloader.cuda.CudaModule;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.Nvrtc;

/**
 * The record gather kernel: copies {@code n} records of {@code recordBytes} each, from {@code n} arbitrary
 * device-accessible source addresses (device memory, or host memory the device can read: pinned memory from
 * {@code cudaHostAlloc}, or a mapping registered with {@code cudaHostRegister(..., Mapped)}) into consecutive places
 * of a device buffer: record {@code i} lands at {@code dst + i * recordBytes}. One warp copies one record, with 16-byte
 * loads and stores where the source, the destination and the record size are all multiples of 16, 4-byte ones where
 * they are multiples of 4, single bytes otherwise.
 *
 * <p>The CUDA C++ source ({@link #SOURCE}) lives here once, for every user: the benchmarks' gather ceiling and a
 * loader engine that gathers shuffled records from mapped shards. {@link #compile()} compiles it with NVRTC
 * ({@code compute_90} PTX) and loads it on the calling thread's current device; {@link #launch} enqueues it.
 *
 * <p>Owns its {@link CudaModule}; {@link #close()} unloads it (idempotent). Launches may come from any thread using
 * the device it was loaded on; the kernel reads its sources and writes {@code dst} only in stream order, so the
 * caller keeps both alive and unchanged until the stream has passed the launch.
 */
public final class GatherKernel implements AutoCloseable {
    /** Threads per block: 8 warps, each copying one record at a time. */
    public static final int BLOCK_THREADS = 256;
    /** The most blocks one launch uses; warps then loop over the records (grid-stride). */
    public static final int MAX_BLOCKS = 1 << 16;
    /** The kernel's entry name. */
    public static final String ENTRY = "gather_records";

    /**
     * The kernel: {@code gather_records(const unsigned long long* src, unsigned char* dst, long long record_bytes,
     * long long n)}, every parameter 64-bit (see {@link CudaModule#launch}).
     */
    public static final String SOURCE = """
            #define GATHER_COPY(T, s, d, bytes, lane) { \\
                const T* s_ = (const T*) (s); T* d_ = (T*) (d); \\
                long long words_ = (bytes) / (long long) sizeof(T); \\
                for (long long k = (lane); k < words_; k += 32) d_[k] = s_[k]; }

            // record r of n: dst[r * record_bytes, +record_bytes) = bytes at src[r]; one warp per record
            extern "C" __global__ void gather_records(const unsigned long long* src, unsigned char* dst,
                                                      long long record_bytes, long long n) {
                long long lane = threadIdx.x & 31;
                long long warp = (blockIdx.x * (long long) blockDim.x + threadIdx.x) >> 5;
                long long warps = ((long long) gridDim.x * blockDim.x) >> 5;
                for (long long r = warp; r < n; r += warps) {
                    const unsigned char* s = (const unsigned char*) src[r];
                    unsigned char* d = dst + r * record_bytes;
                    unsigned long long all = (unsigned long long) s | (unsigned long long) d
                                             | (unsigned long long) record_bytes;
                    if ((all & 15) == 0) {
                        GATHER_COPY(uint4, s, d, record_bytes, lane)
                    } else if ((all & 3) == 0) {
                        GATHER_COPY(unsigned int, s, d, record_bytes, lane)
                    } else {
                        GATHER_COPY(unsigned char, s, d, record_bytes, lane)
                    }
                }
            }
            """;

    private final CudaModule module;

    private GatherKernel(CudaModule module) {
        this.module = module;
    }

    /**
     * Compiles {@link #SOURCE} with NVRTC and loads it on the calling thread's current device. Compile once per
     * device and reuse: compilation takes tens of milliseconds.
     *
     * @return the loaded kernel, owned by the caller
     * @throws CudaException if CUDA or NVRTC is unavailable, or compilation or loading fails (with NVRTC's log)
     */
    public static GatherKernel compile() {
        String ptx = Nvrtc.compileToPtx(SOURCE, "gather.cu", "--gpu-architecture=compute_90");
        return new GatherKernel(CudaModule.load(ptx));
    }

    /**
     * Enqueues the gather of {@code n} records on {@code stream}: for {@code i < n}, the {@code recordBytes} bytes at
     * the address {@code srcAddrs[i]} are copied to {@code dst + i * recordBytes}.
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
    public void launch(long srcAddrs, long dst, long recordBytes, long n, CudaStream stream) {
        if (recordBytes <= 0) {
            throw new IllegalArgumentException("gather: recordBytes must be > 0, got " + recordBytes);
        }
        if (n < 0) {
            throw new IllegalArgumentException("gather: record count must be >= 0, got " + n);
        }
        if (n > Long.MAX_VALUE / recordBytes) {
            throw new IllegalArgumentException("gather: " + n + " records of " + recordBytes + " bytes overflow 64 bits");
        }
        if (n == 0) {
            return;
        }
        module.launch(ENTRY, blocks(n), BLOCK_THREADS, stream, srcAddrs, dst, recordBytes, n);
    }

    /**
     * @param n records
     * @return blocks a launch for {@code n} records uses: one warp per record up to {@link #MAX_BLOCKS} blocks
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
