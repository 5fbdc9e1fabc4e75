package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code gdsloader asyncread} without a GPU: usage errors and the one-line refusal. */
class AsyncReadCommandTest {
    @TempDir
    Path dir;

    private Path data() throws IOException {
        return Files.write(dir.resolve("data.bin"), new byte[1 << 16]);
    }

    @Test
    void withoutAGpuItExitsTwoWithOneLineNamingTheReason() throws IOException {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; this checks the no-GPU output");
        CommandRun r = CommandRun.execute(new AsyncReadCommand(), data().toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("", r.out(), r.toString());
        assertEquals(1, r.err().lines().count(), r.toString());
        assertTrue(r.err().startsWith("gdsloader asyncread: needs a GPU with cuFile: no GPU: "), r.toString());
        assertTrue(r.err().contains(Cuda.availability().reason()), r.toString());
    }

    @Test
    void badCountsAndSizesAreUsageErrorsNamingTheOption() throws IOException {
        String f = data().toString();
        CommandRun threads = CommandRun.execute(new AsyncReadCommand(), "--threads", "4,0", f);
        assertEquals(2, threads.exitCode(), threads.toString());
        assertTrue(threads.err().contains("--threads needs one or more counts, each >= 1"), threads.toString());
        CommandRun sizes = CommandRun.execute(new AsyncReadCommand(), "--sizes", "1000", f);
        assertEquals(2, sizes.exitCode(), sizes.toString());
        assertTrue(sizes.err().contains("multiple of 4 KiB"), sizes.toString());
        CommandRun flags = CommandRun.execute(new AsyncReadCommand(), "--stream-flags", "99", f);
        assertTrue(flags.err().contains("--stream-flags must be 0 to 15"), flags.toString());
        CommandRun mode = CommandRun.execute(new AsyncReadCommand(), "--modes", "HOT", f);
        assertEquals(2, mode.exitCode(), mode.toString());
    }

    @Test
    void aMissingFileIsAUsageErrorNamingIt() {
        CommandRun r = CommandRun.execute(new AsyncReadCommand(), dir.resolve("nope").toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().contains("nope: no such file or directory"), r.toString());
    }

    @Test
    void sizesWithUnitsAndLowerCountsPassTheChecksAndReachTheGpuCheck() throws IOException {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; this checks the no-GPU output");
        CommandRun r = CommandRun.execute(new AsyncReadCommand(), "--sizes", "64KiB,2MiB", "--threads", "2",
                "--streams", "1,2", "--modes", "DIRECT", "--rounds", "1", data().toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().startsWith("gdsloader asyncread: needs a GPU with cuFile: "), r.toString());
    }
}
