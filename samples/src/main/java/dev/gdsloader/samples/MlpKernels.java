package dev.gdsloader.samples;

import dev.gdsloader.cuda.CudaModule;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.Nvrtc;

/**
 * The elementwise kernels of {@link GpuMlp}, CUDA C++ compiled at run time by NVRTC for {@code compute_90}
 * PTX (the driver compiles that for the device it loads on), and their launches. Every kernel uses a
 * grid-stride loop and takes only 64-bit parameters (see {@link CudaModule#launch}); floats are row-major.
 *
 * <p>Owns the loaded module; {@link #close()} unloads it. Launches may come from one thread at a time.
 */
final class MlpKernels implements AutoCloseable {
    private static final int BLOCK = 256;
    private static final int MAX_BLOCKS = 1024;

    /** The kernels. Parameters are 64-bit: pointers, {@code long long} counts, {@code double} scalars. */
    static final String SOURCE = """
            #define LOOP(i, n) for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < (n); \\
                                    i += (long long) gridDim.x * blockDim.x)

            // x[i] = pixel / 255
            extern "C" __global__ void bytes_to_unit_floats(const unsigned char* in, float* out, long long n) {
                LOOP(i, n) { out[i] = in[i] * (1.0f / 255.0f); }
            }

            // y[r][j] += b[j], then ReLU if relu != 0
            extern "C" __global__ void add_bias(float* y, const float* b, long long rows, long long cols, long long relu) {
                LOOP(i, rows * cols) {
                    float v = y[i] + b[i % cols];
                    y[i] = relu && v < 0.0f ? 0.0f : v;
                }
            }

            // per row: p = softmax(z); loss_sum += -log p[label]; dz = (p - onehot(label)) / rows
            extern "C" __global__ void softmax_cross_entropy(const float* z, const unsigned char* labels, float* dz,
                                                             float* loss_sum, long long rows, long long classes) {
                LOOP(r, rows) {
                    const float* zr = z + r * classes;
                    float m = zr[0];
                    for (long long j = 1; j < classes; j++) m = fmaxf(m, zr[j]);
                    float s = 0.0f;
                    for (long long j = 0; j < classes; j++) s += expf(zr[j] - m);
                    int y = labels[r];
                    for (long long j = 0; j < classes; j++) {
                        float p = expf(zr[j] - m) / s;
                        dz[r * classes + j] = (p - (j == y ? 1.0f : 0.0f)) / (float) rows;
                    }
                    atomicAdd(loss_sum, logf(s) - (zr[y] - m));
                }
            }

            // out[j] = sum over rows of g[r][j]
            extern "C" __global__ void column_sums(const float* g, float* out, long long rows, long long cols) {
                LOOP(j, cols) {
                    float s = 0.0f;
                    for (long long r = 0; r < rows; r++) s += g[r * cols + j];
                    out[j] = s;
                }
            }

            // ReLU': da = 0 where the forward activation a was not positive
            extern "C" __global__ void relu_backward(float* da, const float* a, long long n) {
                LOOP(i, n) { if (a[i] <= 0.0f) da[i] = 0.0f; }
            }

            // v = momentum * v - lr * g; w += v (the CPU model's update)
            extern "C" __global__ void sgd_momentum(float* w, float* v, const float* g, long long n, double lr,
                                                    double momentum) {
                LOOP(i, n) {
                    float vi = (float) momentum * v[i] - (float) lr * g[i];
                    v[i] = vi;
                    w[i] += vi;
                }
            }

            // correct += number of rows whose arg max equals the label
            extern "C" __global__ void count_correct(const float* z, const unsigned char* labels, int* correct,
                                                     long long rows, long long classes) {
                LOOP(r, rows) {
                    const float* zr = z + r * classes;
                    int best = 0;
                    for (long long j = 1; j < classes; j++) if (zr[j] > zr[best]) best = (int) j;
                    if (best == labels[r]) atomicAdd(correct, 1);
                }
            }
            """;

    private static final int CLASSES = 10;

    private final CudaModule module;

    private MlpKernels(CudaModule module) {
        this.module = module;
    }

    /**
     * Compiles and loads the kernels on the current device.
     *
     * @return the kernels, owned by the caller
     * @throws dev.gdsloader.cuda.CudaException if NVRTC is missing or the driver rejects the PTX
     */
    static MlpKernels compile() {
        return new MlpKernels(CudaModule.load(Nvrtc.compileToPtx(SOURCE, "mlp_kernels.cu", "--gpu-architecture=compute_90")));
    }

    private void launch(String kernel, CudaStream s, long n, long... args) {
        int blocks = (int) Math.max(1, Math.min(MAX_BLOCKS, (n + BLOCK - 1) / BLOCK));
        module.launch(kernel, blocks, BLOCK, s, args);
    }

    void bytesToUnitFloats(CudaStream s, long in, long out, long n) {
        launch("bytes_to_unit_floats", s, n, in, out, n);
    }

    void addBias(CudaStream s, long y, long bias, long rows, long cols, boolean relu) {
        launch("add_bias", s, rows * cols, y, bias, rows, cols, relu ? 1 : 0);
    }

    void softmaxCrossEntropy(CudaStream s, long logits, long labels, long dLogits, long lossSum, long rows) {
        launch("softmax_cross_entropy", s, rows, logits, labels, dLogits, lossSum, rows, CLASSES);
    }

    void columnSums(CudaStream s, long g, long out, long rows, long cols) {
        launch("column_sums", s, cols, g, out, rows, cols);
    }

    void reluBackward(CudaStream s, long da, long a, long n) {
        launch("relu_backward", s, n, da, a, n);
    }

    void sgdMomentum(CudaStream s, long w, long v, long g, long n, float lr, float momentum) {
        launch("sgd_momentum", s, n, w, v, g, n, Double.doubleToRawLongBits(lr), Double.doubleToRawLongBits(momentum));
    }

    void countCorrect(CudaStream s, long logits, long labels, long correct, long rows) {
        launch("count_correct", s, rows, logits, labels, correct, rows, CLASSES);
    }

    /** Unloads the module. Idempotent. */
    @Override
    public void close() {
        module.close();
    }
}
