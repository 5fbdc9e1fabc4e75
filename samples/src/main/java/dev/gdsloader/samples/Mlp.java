package dev.gdsloader.samples;

import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * A 784-256-128-10 multilayer perceptron in plain Java (ReLU, softmax cross-entropy, SGD with momentum): the
 * CPU fallback of the Fashion-MNIST sample. Row-major float matrices; rows of a batch are processed in parallel.
 * Not thread-safe (one training loop).
 */
final class Mlp {
    /** Units per layer: 784 inputs, hidden layers of 256 and 128, 10 classes. */
    static final int[] SIZES = {784, 256, 128, 10};

    private final float[][] w = new float[3][];
    private final float[][] b = new float[3][];
    private final float[][] vw = new float[3][];
    private final float[][] vb = new float[3][];
    private final float learningRate;
    private final float momentum;

    /**
     * @param seed seed of the He initialisation
     * @param learningRate SGD step
     * @param momentum SGD momentum
     */
    Mlp(long seed, float learningRate, float momentum) {
        this.learningRate = learningRate;
        this.momentum = momentum;
        float[][] init = heNormal(seed);
        for (int l = 0; l < 3; l++) {
            int out = SIZES[l + 1];
            w[l] = init[l];
            b[l] = new float[out];
            vw[l] = new float[w[l].length];
            vb[l] = new float[out];
        }
    }

    /**
     * He-normal initial weights of the three layers (He et al. 2015: N(0, 2 / fan_in)), the same for the CPU
     * model and the GPU model ({@code GpuMlp}) of one seed. Biases start at zero.
     *
     * @param seed the random seed
     * @return per layer {@code l}, a row-major {@code SIZES[l] x SIZES[l + 1]} weight matrix
     */
    static float[][] heNormal(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        float[][] weights = new float[3][];
        for (int l = 0; l < 3; l++) {
            int in = SIZES[l];
            weights[l] = new float[in * SIZES[l + 1]];
            double scale = Math.sqrt(2.0 / in);
            for (int i = 0; i < weights[l].length; i++) {
                weights[l][i] = (float) (gaussian(rnd) * scale);
            }
        }
        return weights;
    }

    private static double gaussian(SplittableRandom r) {
        double u = 1 - r.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r.nextDouble());
    }

    /** out[n x o] = act(in[n x i] . w[i x o] + b) */
    private static void dense(float[] in, int n, int i, float[] w, float[] b, int o, float[] out, boolean relu) {
        IntStream.range(0, n).parallel().forEach(r -> {
            int ro = r * o;
            System.arraycopy(b, 0, out, ro, o);
            for (int k = 0; k < i; k++) {
                float a = in[r * i + k];
                if (a == 0) {
                    continue;
                }
                int wk = k * o;
                for (int j = 0; j < o; j++) {
                    out[ro + j] += a * w[wk + j];
                }
            }
            if (relu) {
                for (int j = 0; j < o; j++) {
                    if (out[ro + j] < 0) {
                        out[ro + j] = 0;
                    }
                }
            }
        });
    }

    /**
     * @param x inputs, n x 784, scaled to [0, 1]
     * @param n rows
     * @return logits, n x 10, and the activations of the hidden layers in {@code acts}
     */
    private float[] forward(float[] x, int n, float[][] acts) {
        acts[0] = x;
        for (int l = 0; l < 3; l++) {
            float[] out = new float[n * SIZES[l + 1]];
            dense(acts[l], n, SIZES[l], w[l], b[l], SIZES[l + 1], out, l < 2);
            acts[l + 1] = out;
        }
        return acts[3];
    }

    /**
     * One SGD step on a batch.
     *
     * @param x inputs, n x 784
     * @param labels class of each row
     * @param n rows
     * @return mean cross-entropy loss of the batch
     */
    float train(float[] x, int[] labels, int n) {
        float[][] acts = new float[4][];
        float[] logits = forward(x, n, acts);
        float[] grad = new float[n * 10];
        double loss = 0;
        for (int r = 0; r < n; r++) {
            float max = Float.NEGATIVE_INFINITY;
            for (int j = 0; j < 10; j++) {
                max = Math.max(max, logits[r * 10 + j]);
            }
            double sum = 0;
            for (int j = 0; j < 10; j++) {
                sum += Math.exp(logits[r * 10 + j] - max);
            }
            for (int j = 0; j < 10; j++) {
                double p = Math.exp(logits[r * 10 + j] - max) / sum;
                grad[r * 10 + j] = (float) ((p - (j == labels[r] ? 1 : 0)) / n);
            }
            loss -= logits[r * 10 + labels[r]] - max - Math.log(sum);
        }
        for (int l = 2; l >= 0; l--) {
            int in = SIZES[l];
            int out = SIZES[l + 1];
            float[] a = acts[l];
            float[] g = grad;
            float[] gw = new float[in * out];
            float[] gb = new float[out];
            IntStream.range(0, in).parallel().forEach(k -> {
                for (int r = 0; r < n; r++) {
                    float av = a[r * in + k];
                    if (av == 0) {
                        continue;
                    }
                    for (int j = 0; j < out; j++) {
                        gw[k * out + j] += av * g[r * out + j];
                    }
                }
            });
            for (int r = 0; r < n; r++) {
                for (int j = 0; j < out; j++) {
                    gb[j] += g[r * out + j];
                }
            }
            if (l > 0) {
                float[] prev = new float[n * in];
                float[] wl = w[l];
                IntStream.range(0, n).parallel().forEach(r -> {
                    for (int k = 0; k < in; k++) {
                        if (a[r * in + k] <= 0) {
                            continue; // ReLU'
                        }
                        float s = 0;
                        for (int j = 0; j < out; j++) {
                            s += wl[k * out + j] * g[r * out + j];
                        }
                        prev[r * in + k] = s;
                    }
                });
                grad = prev;
            }
            for (int i = 0; i < gw.length; i++) {
                vw[l][i] = momentum * vw[l][i] - learningRate * gw[i];
                w[l][i] += vw[l][i];
            }
            for (int j = 0; j < out; j++) {
                vb[l][j] = momentum * vb[l][j] - learningRate * gb[j];
                b[l][j] += vb[l][j];
            }
        }
        return (float) (loss / n);
    }

    /**
     * @param x inputs, n x 784
     * @param n rows
     * @param out predicted class of each row
     */
    void predict(float[] x, int n, int[] out) {
        float[] logits = forward(x, n, new float[4][]);
        for (int r = 0; r < n; r++) {
            int best = 0;
            for (int j = 1; j < 10; j++) {
                if (logits[r * 10 + j] > logits[r * 10 + best]) {
                    best = j;
                }
            }
            out[r] = best;
        }
    }
}
