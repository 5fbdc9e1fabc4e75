package dev.gdsloader.bench;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import jcuda.Pointer;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaMemcpyKind;

/**
 * Host-to-device copy ceilings of this machine, measured in the benchmark's own run: 64 MiB copies from
 * pinned memory ({@code cudaMemcpyAsync} on a stream) and from pageable Java heap memory (synchronous
 * {@code cudaMemcpy}, which stages through a hidden pinned buffer). Stateless.
 */
public final class CopyCeilings {
    private static final int BYTES = 64 << 20;
    private static final int REPS = 16;

    private CopyCeilings() {
    }

    /**
     * @param pinnedGbps pinned host to device, GB/s (1e9 bytes/s)
     * @param pageableGbps pageable host to device, GB/s
     */
    public record Result(double pinnedGbps, double pageableGbps) {
    }

    /**
     * @return both ceilings, or zeros where there is no GPU
     */
    public static Result measure() {
        if (!Cuda.availability().available()) {
            return new Result(0, 0);
        }
        try (PinnedBuffer pinned = PinnedBuffer.allocate(BYTES); DeviceBuffer dev = DeviceBuffer.allocate(BYTES);
             CudaStream s = CudaStream.create()) {
            s.copyToDevice(dev, 0, pinned, 0, BYTES);
            s.synchronize();
            long t0 = System.nanoTime();
            for (int i = 0; i < REPS; i++) {
                s.copyToDevice(dev, 0, pinned, 0, BYTES);
            }
            s.synchronize();
            double pinnedGbps = (double) REPS * BYTES / (System.nanoTime() - t0);
            byte[] heap = new byte[BYTES];
            Pointer src = Pointer.to(heap);
            Cuda.check(JCuda.cudaMemcpy(dev.pointer(0), src, BYTES, cudaMemcpyKind.cudaMemcpyHostToDevice), "cudaMemcpy");
            long t1 = System.nanoTime();
            for (int i = 0; i < REPS / 4; i++) {
                Cuda.check(JCuda.cudaMemcpy(dev.pointer(0), src, BYTES, cudaMemcpyKind.cudaMemcpyHostToDevice), "cudaMemcpy");
            }
            double pageableGbps = (double) (REPS / 4) * BYTES / (System.nanoTime() - t1);
            return new Result(pinnedGbps, pageableGbps);
        }
    }
}
