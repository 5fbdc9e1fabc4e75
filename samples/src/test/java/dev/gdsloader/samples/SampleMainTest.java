package dev.gdsloader.samples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The samples' mains, run as a user runs them (a child JVM): a user's error is one line and exit status 2. */
class SampleMainTest {
    @TempDir
    Path dir;

    private record Run(int status, String output) {
    }

    private static Run run(Class<?> sample, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + Objects.requireNonNull(System.getProperty("gds.jvm.flags"),
                        "system property gds.jvm.flags: bin/jvm-flags (the root pom sets it)"),
                "-cp", System.getProperty("java.class.path"), sample.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "sample finished");
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), UTF_8));
    }

    @Test
    void aWrongArgumentCountPrintsTheUsage() throws Exception {
        Run r = run(DropIntoYourLoop.class);
        assertEquals(2, r.status(), r.output());
        assertEquals("usage: DropIntoYourLoop DATASET_DIR COLUMN", r.output().strip());
    }

    @Test
    void aBadNumberIsNamedWithoutAStackTrace() throws Exception {
        Run r = run(FashionMnistTraining.class, dir.toString(), dir.resolve("w").toString(), "abc");
        assertEquals(2, r.status(), r.output());
        assertEquals("FashionMnistTraining: EPOCHS must be a whole number in 1..2147483647, got 'abc'", r.output().strip());
        r = run(FashionMnistTraining.class, dir.toString(), dir.resolve("w").toString(), "1", "-5");
        assertEquals(2, r.status(), r.output());
        assertTrue(r.output().contains("MAX_TRAIN_RECORDS must be a whole number in 1..2147483647, got '-5'"), r.output());
    }

    @Test
    void missingDataIsOneLineNamingTheFile() throws Exception {
        Run r = run(FashionMnistTraining.class, dir.toString(), dir.resolve("w").toString(), "1");
        assertEquals(2, r.status(), r.output());
        assertTrue(r.output().startsWith("FashionMnistTraining: " + dir + ": neither train-images-idx3-ubyte"), r.output());
        assertFalse(r.output().contains("\tat "), r.output());
    }

    @Test
    void theGpuSampleWithoutAGpuSaysSoBeforeConvertingAnything() throws Exception {
        assumeFalse(Cuda.availability().available(), "a GPU is here");
        Path work = dir.resolve("work");
        Run r = run(FashionMnistGpuTraining.class, dir.toString(), work.toString(), "1");
        assertEquals(2, r.status(), r.output());
        assertTrue(r.output().startsWith("FashionMnistGpuTraining: needs a GPU: "), r.output());
        assertFalse(r.output().contains("\tat "), r.output());
        assertFalse(Files.exists(work), "nothing converted");
    }

    @Test
    void theGpuSampleTakesEveryDevicePathMappedIncludedAndRefusesHost() throws Exception {
        assumeFalse(Cuda.availability().available(), "a GPU is here");
        for (String path : List.of("MAPPED", "mapped", "BOUNCE", "GDS", "AUTO")) {
            Run r = run(FashionMnistGpuTraining.class, dir.toString(), dir.resolve("work").toString(), "1", path);
            assertEquals(2, r.status(), r.output());
            assertTrue(r.output().startsWith("FashionMnistGpuTraining: needs a GPU: "), path + ": " + r.output());
        }
        Run host = run(FashionMnistGpuTraining.class, dir.toString(), dir.resolve("work").toString(), "1", "HOST");
        assertEquals(2, host.status(), host.output());
        assertEquals("FashionMnistGpuTraining: PATH must be AUTO, MAPPED, GDS or BOUNCE, got 'HOST'", host.output().strip());
    }

    @Test
    void aNumberPastTheIntRangeStatesTheRange() throws Exception {
        Run r = run(FashionMnistTraining.class, dir.toString(), dir.resolve("w").toString(), "1", "99999999999");
        assertEquals(2, r.status(), r.output());
        assertEquals("FashionMnistTraining: MAX_TRAIN_RECORDS must be a whole number in 1..2147483647, got '99999999999'",
                r.output().strip());
    }

    @Test
    void aBadPathIsNamedWithTheValuesAccepted() throws Exception {
        Run r = run(FashionMnistGpuTraining.class, dir.toString(), dir.resolve("w").toString(), "10", "WARP");
        assertEquals(2, r.status(), r.output());
        assertEquals("FashionMnistGpuTraining: PATH must be AUTO, MAPPED, GDS or BOUNCE, got 'WARP'", r.output().strip());
    }

    @Test
    void aFileSystemErrorSaysWhyNotOnlyThePath() throws Exception {
        Path file = Files.writeString(dir.resolve("plain"), "x");
        Run r = run(FashionMnistTraining.class, file.resolve("sub").toString(), dir.resolve("w").toString(), "1");
        assertEquals(2, r.status(), r.output());
        String line = r.output().strip();
        assertTrue(line.startsWith("FashionMnistTraining: "), line);
        assertFalse(line.equals("FashionMnistTraining: " + file.resolve("sub")), "a reason after the path: " + line);
        assertFalse(line.contains("\tat "), line);
    }
}
