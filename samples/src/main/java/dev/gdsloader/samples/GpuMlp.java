package dev.gdsloader.samples;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.memory.Closeables;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The 784-256-128-10 MLP of {@link Mlp} (ReLU, softmax cross-entropy, SGD with momentum, He-normal weights of
 * the same seed) on the GPU: matrix products through cuBLAS, elementwise work in kernels compiled at run time
 * by NVRTC ({@link MlpKernels}), everything enqueued on one training stream. A step takes the batch's device
 * pointers (images {@code uint8[n][784]}, labels {@code uint8[n]}) and returns at once: nothing waits on the
 * host per batch. Loss and accuracy accumulate in device counters that {@link #takeLossSum()} and
 * {@link #takeCorrect()} read (and reset) once per epoch, synchronising the stream.
 *
 * <p>Arrays are row-major; cuBLAS sees each as its column-major transpose, so {@code out[n x o] = in[n x i] .
 * W[i x o]} is {@code sgemm(N, N, o, n, i, W, in)}.
 *
 * <p>Owns its device memory, cuBLAS handle and kernels; {@link #close()} frees them. The stream is the
 * caller's and must outlive this model. Not thread-safe: one training loop.
 */
final class GpuMlp implements AutoCloseable {
    private static final int[] SIZES = Mlp.SIZES;
    private static final int LAYERS = 3;

    private final CudaStream stream;
    private final int maxRows;
    private final float learningRate;
    private final float momentum;
    private final long parameterCount;
    private final long[] weightOffset = new long[LAYERS];
    private final long[] biasOffset = new long[LAYERS];
    private final long[] activation = new long[LAYERS + 1];
    private final long[] gradient = new long[LAYERS + 1];
    private final long lossSum;
    private final long correct;

    // fields assigned last: each is closed by close() (and by the constructor if a later step fails)
    private DeviceBuffer memory;
    private PinnedBuffer host;
    private Cublas blas;
    private MlpKernels kernels;

    /**
     * @param stream the training stream (the caller's)
     * @param seed seed of the He-normal weights (the CPU model of the same seed starts from the same weights)
     * @param learningRate SGD step
     * @param momentum SGD momentum
     * @param maxRows the largest batch, records (activations are sized for it)
     * @throws dev.gdsloader.cuda.CudaException if device memory, cuBLAS or NVRTC is not available
     */
    GpuMlp(CudaStream stream, long seed, float learningRate, float momentum, int maxRows) {
        this.stream = stream;
        this.maxRows = maxRows;
        this.learningRate = learningRate;
        this.momentum = momentum;
        long p = 0;
        for (int l = 0; l < LAYERS; l++) {
            weightOffset[l] = p;
            p += (long) SIZES[l] * SIZES[l + 1];
            biasOffset[l] = p;
            p += SIZES[l + 1];
        }
        parameterCount = p;
        // one device allocation: parameters, their gradients and velocities (same layout), then activations and
        // activation gradients per layer, then the loss (float) and correct-count (int) counters
        long at = 3 * 4 * parameterCount;
        for (int l = 0; l <= LAYERS; l++) {
            activation[l] = at;
            at += 4L * maxRows * SIZES[l];
            gradient[l] = at;
            at += 4L * maxRows * SIZES[l];
        }
        lossSum = at;
        correct = at + 8;
        long bytes = at + 16;
        try {
            memory = DeviceBuffer.allocate(bytes);
            host = PinnedBuffer.allocate(4 * parameterCount);
            blas = Cublas.create(stream);
            kernels = MlpKernels.compile();
            upload(Mlp.heNormal(seed));
        } catch (RuntimeException | Error e) {
            try {
                close();
            } catch (RuntimeException c) {
                e.addSuppressed(c);
            }
            throw e;
        }
    }

    /** Copies the initial weights (and zero biases, velocities, counters) to the device and waits for it. */
    private void upload(float[][] weights) {
        MemorySegment h = host.segment();
        h.fill((byte) 0);
        for (int l = 0; l < LAYERS; l++) {
            MemorySegment.copy(weights[l], 0, h, ValueLayout.JAVA_FLOAT, 4 * weightOffset[l], weights[l].length);
        }
        memory.fill(0);
        stream.copyToDevice(memory, 0, host, 0, 4 * parameterCount);
        stream.synchronize();
    }

    /**
     * Enqueues one SGD step on a batch: forward, loss (added to the loss counter), backward, update.
     *
     * @param images device pointer to {@code uint8[rows][784]}
     * @param labels device pointer to {@code uint8[rows]}, classes 0-9
     * @param rows records in the batch, 1..maxRows
     * @throws IllegalArgumentException if {@code rows} is out of range
     */
    void trainStep(long images, long labels, int rows) {
        forward(images, rows);
        long logits = address(activation[LAYERS]);
        long dLogits = address(gradient[LAYERS]);
        kernels.softmaxCrossEntropy(stream, logits, labels, dLogits, address(lossSum), rows);
        for (int l = LAYERS - 1; l >= 0; l--) {
            int in = SIZES[l];
            int out = SIZES[l + 1];
            long a = address(activation[l]);
            long g = address(gradient[l + 1]);
            long grads = address(4 * parameterCount);
            // dW[in x out] = a^T . g ; db = column sums of g
            blas.sgemm(false, true, out, in, rows, 1f, g, out, a, in, 0f, grads + 4 * weightOffset[l], out);
            kernels.columnSums(stream, g, grads + 4 * biasOffset[l], rows, out);
            if (l > 0) {
                // da[rows x in] = g . W^T, then ReLU': zero where the forward activation was not positive
                long da = address(gradient[l]);
                blas.sgemm(true, false, in, rows, out, 1f, address(4 * weightOffset[l]), out, g, out, 0f, da, in);
                kernels.reluBackward(stream, da, a, (long) rows * in);
            }
        }
        kernels.sgdMomentum(stream, address(0), address(8 * parameterCount), address(4 * parameterCount),
                parameterCount, learningRate, momentum);
    }

    /**
     * Enqueues a forward pass and adds the number of correctly classified records to the correct counter.
     *
     * @param images device pointer to {@code uint8[rows][784]}
     * @param labels device pointer to {@code uint8[rows]}
     * @param rows records, 1..maxRows
     */
    void evaluate(long images, long labels, int rows) {
        forward(images, rows);
        kernels.countCorrect(stream, address(activation[LAYERS]), labels, address(correct), rows);
    }

    private void forward(long images, int rows) {
        if (rows < 1 || rows > maxRows) {
            throw new IllegalArgumentException("batch of " + rows + " records; this model takes 1.." + maxRows);
        }
        kernels.bytesToUnitFloats(stream, images, address(activation[0]), (long) rows * SIZES[0]);
        for (int l = 0; l < LAYERS; l++) {
            int in = SIZES[l];
            int out = SIZES[l + 1];
            long y = address(activation[l + 1]);
            blas.sgemm(false, false, out, rows, in, 1f, address(4 * weightOffset[l]), out, address(activation[l]), in,
                    0f, y, out);
            kernels.addBias(stream, y, address(4 * biasOffset[l]), rows, out, l < LAYERS - 1);
        }
    }

    /**
     * Waits for the stream, then reads and resets the loss counter.
     *
     * @return the sum over records of the cross-entropy loss since the last call
     */
    float takeLossSum() {
        return Float.intBitsToFloat(takeCounter(lossSum));
    }

    /**
     * Waits for the stream, then reads and resets the correct counter.
     *
     * @return records classified correctly by {@link #evaluate} since the last call
     */
    long takeCorrect() {
        return takeCounter(correct);
    }

    private int takeCounter(long offset) {
        stream.copyToHost(host, 0, memory, offset, 4);
        stream.synchronize();
        int bits = host.segment().get(ValueLayout.JAVA_INT, 0);
        host.segment().set(ValueLayout.JAVA_INT, 0, 0);
        stream.copyToDevice(memory, offset, host, 0, 4);
        stream.synchronize();
        return bits;
    }

    private long address(long offset) {
        return memory.address() + offset;
    }

    /**
     * Frees the kernels, the cuBLAS handle and the memory; waits for the stream first. Idempotent. Everything is
     * freed even if waiting or an earlier free fails.
     *
     * @throws IllegalStateException naming the first failure (later ones suppressed), after everything was freed
     */
    @Override
    public void close() {
        AutoCloseable drain = memory != null && !memory.isClosed() ? stream::synchronize : null;
        Exception first = Closeables.closeAll(drain, kernels, blas, host, memory);
        if (first != null) {
            throw new IllegalStateException("freeing the GPU model failed", first); // later failures: suppressed on it
        }
    }
}
