package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gdsloader fanout} on the host path over generated shards (no GPU: the group's members share the host slot):
 * the whole comparison runs, every member's batches are byte-exact against the loader alone, storage is read once.
 */
class FanOutCommandTest {
    @TempDir
    Path dir;

    @Test
    void aGroupOfTwoOnTheHostPathReadsOnceAndEveryMemberIsByteExact() throws Exception {
        Path data = dir.resolve("d");
        CommandRun g = CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", "2MiB", "--shards", "3",
                "--record-bytes", "4000");
        assertEquals(0, g.exitCode(), g.toString());
        CommandRun r = CommandRun.execute(new FanOutCommand(), "--path", "HOST", "--devices", "0,1", "--epochs", "1",
                "--batch-size", "50", "--out", dir.resolve("o").toString(), data.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("storage group / alone 1.000 (target 1.00)"), r.toString());
        assertTrue(r.out().contains("byte-exact yes"), r.toString());
        assertTrue(r.out().contains("host path: every member reads the one host slot"), r.toString());
        assertTrue(Files.readString(dir.resolve("o/fanout-hot.json")).contains("\"storageRatio\" : 1.0"));
    }

    @Test
    void refusesInOneLineWhenTheGroupsGpusAreNotThere() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; this checks the no-GPU refusal");
        CommandRun r = CommandRun.execute(new FanOutCommand(), "--path", "BOUNCE", dir.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().startsWith("gdsloader fanout: --devices [0, 1] needs 2 GPU(s), found 0"), r.toString());
        CommandRun twice = CommandRun.execute(new FanOutCommand(), "--devices", "1,1", dir.toString());
        assertEquals("gdsloader fanout: --devices must name distinct GPUs >= 0, got [1, 1]", twice.err().trim());
    }
}
