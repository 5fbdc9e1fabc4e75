package dev.gdsloader.samples;

import dev.gdsloader.cuda.*;
import dev.gdsloader.loader.*;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/** The loader feeding your own kernel on your stream. Usage: {@code DropIntoYourLoop DATASET_DIR COLUMN}. */
public final class DropIntoYourLoop {
    private static final String SUM = """
            extern "C" __global__ void sum(const unsigned char* x, long long n, unsigned long long* out) {
                for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
                    atomicAdd(out, (unsigned long long) x[i]);
            }""";

    /** @param args dataset directory, column @throws Exception on a bug (a user's error exits 2 with one line) */
    public static void main(String[] args) throws Exception {
        SampleMain.run("DropIntoYourLoop", "DATASET_DIR COLUMN", 2, 2, args, a -> {
            try (GdsLoader loader = GdsLoader.builder(Path.of(a[0])).batchSize(256).build();
                 CudaStream stream = CudaStream.create(); // your training stream
                 CudaModule kernels = CudaModule.load(Nvrtc.compileToPtx(SUM, "sum.cu"));
                 DeviceBuffer total = DeviceBuffer.allocate(8); PinnedBuffer result = PinnedBuffer.allocate(8)) {
                total.fill(0);
                for (Batch batch : loader) { // every batch of one epoch
                    batch.awaitOn(stream); // the stream (not the host) waits until the batch is in device memory
                    ColumnView column = batch.column(a[1]);
                    kernels.launch("sum", 64, 256, stream, column.devicePointer(), column.bytes(), total.address());
                    // Any CUDA library takes the same raw device pointer and stream, e.g. bytedeco cuBLAS:
                    //   cublasSetStream_v2(handle, JavaCppPointers.stream(stream));
                    //   cublasSgemm_v2(handle, ..., JavaCppPointers.floats(column.devicePointer()), ...);
                    batch.release(stream); // the loader refills this slot once the stream has passed this point
                }
                stream.copyToHost(result, 0, total, 0, 8); stream.synchronize(); // the one host wait
                System.out.println(loader.pathReason() + "\nsum of the bytes of '" + a[1] + "': "
                        + result.segment().get(ValueLayout.JAVA_LONG, 0));
            }
        });
    }
}
