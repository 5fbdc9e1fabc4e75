package dev.gdsloader.samples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CPU fallback trains the MLP on a Fashion-MNIST subset fed by the loader (shuffled sampler, host path)
 * and must beat a floor that a broken loader cannot reach (labels out of step with images give about 0.1).
 */
class FashionMnistTrainingTest {
    @TempDir
    Path work;

    private static Path idx() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path c = p.resolveSibling("shared").resolve("datasets").resolve("fashion-mnist");
            if (Files.exists(c.resolve("train-images-idx3-ubyte.gz"))) {
                return c;
            }
        }
        return null;
    }

    @Test
    void trainingOnASubsetReachesAnAccuracyFloor() throws IOException {
        Path idx = idx();
        assumeTrue(idx != null, "Fashion-MNIST not found beside the repository");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        FashionMnistTraining.Result r = FashionMnistTraining.train(idx, work, 2, 12_000, 64, new PrintStream(out, true, UTF_8));
        String log = out.toString(UTF_8);
        assertTrue(r.testAccuracy() >= 0.75, "test accuracy " + r.testAccuracy() + "\n" + log);
        assertTrue(log.contains("epoch 1:") && log.contains("samples/s") && log.contains("waited for data"), log);
    }
}
