package dev.gdsloader.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The GPU model against the CPU model: from the same weights, steps on the same batches give the same losses
 * (float sums in another order: within 1e-3), so forward, loss, backward and update agree; and the evaluation
 * count agrees with the CPU model's predictions.
 */
@Tag("gpu")
class GpuMlpGpuTest {
    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @Test
    void stepsMatchTheCpuModel() {
        int rows = 48;
        SplittableRandom r = new SplittableRandom(5);
        byte[] images = new byte[rows * 784];
        byte[] labels = new byte[rows];
        float[] x = new float[rows * 784];
        int[] y = new int[rows];
        for (int i = 0; i < images.length; i++) {
            images[i] = (byte) r.nextInt(256);
            x[i] = (images[i] & 0xff) / 255f;
        }
        for (int i = 0; i < rows; i++) {
            y[i] = r.nextInt(10);
            labels[i] = (byte) y[i];
        }
        Mlp cpu = new Mlp(7, 0.01f, 0.9f);
        try (CudaStream s = CudaStream.create(); GpuMlp gpu = new GpuMlp(s, 7, 0.01f, 0.9f, 64);
             PinnedBuffer host = PinnedBuffer.allocate(images.length + rows);
             DeviceBuffer dev = DeviceBuffer.allocate(images.length + rows)) {
            host.segment().copyFrom(java.lang.foreign.MemorySegment.ofArray(images));
            host.segment().asSlice(images.length).copyFrom(java.lang.foreign.MemorySegment.ofArray(labels));
            s.copyToDevice(dev, 0, host, 0, images.length + rows);
            long img = dev.address();
            long lab = img + images.length;
            for (int step = 0; step < 5; step++) {
                float cpuLoss = cpu.train(x, y, rows);
                gpu.trainStep(img, lab, rows);
                assertEquals(cpuLoss, gpu.takeLossSum() / rows, 1e-3, "loss of step " + step);
            }
            int[] predicted = new int[rows];
            cpu.predict(x, rows, predicted);
            long right = 0;
            for (int i = 0; i < rows; i++) {
                right += predicted[i] == y[i] ? 1 : 0;
            }
            gpu.evaluate(img, lab, rows);
            assertEquals(right, gpu.takeCorrect());
        }
    }
}
