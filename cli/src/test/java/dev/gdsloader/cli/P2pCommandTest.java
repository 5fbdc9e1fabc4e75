package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.bench.PeerCopyBench;
import dev.gdsloader.cuda.Cuda;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code gdsloader p2p}'s refusals and its table, without a GPU. */
class P2pCommandTest {
    @TempDir
    Path dir;

    @Test
    void refusesInOneLineWithoutTwoGpus() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; this checks the no-GPU refusal");
        CommandRun r = CommandRun.execute(new P2pCommand(), "--out", dir.resolve("o").toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals(1, r.err().lines().count(), r.toString());
        assertTrue(r.err().startsWith("gdsloader p2p: needs two GPUs, found none: it copies from GPU 0's memory to GPU 1's "
                + "(--same-device: within one GPU); CUDA is not available: "), r.toString());
        CommandRun same = CommandRun.execute(new P2pCommand(), "--same-device", "--src", "0", "--out", dir.resolve("o").toString());
        assertEquals(2, same.exitCode(), same.toString());
        assertEquals(1, same.err().lines().count(), same.toString());
        assertTrue(same.err().startsWith("gdsloader p2p: --same-device needs a GPU, found none: it copies within GPU 0's memory; "
                + "CUDA is not available: "), same.toString());
    }

    @Test
    void aNegativeGpuOrdinalIsRefusedFirst() {
        CommandRun r = CommandRun.execute(new P2pCommand(), "--src", "-1", "--out", dir.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader p2p: --src -1: a GPU ordinal is 0 or more (nvidia-smi -L lists them)", r.err().trim());
        CommandRun d = CommandRun.execute(new P2pCommand(), "--dst", "-3", "--out", dir.toString());
        assertEquals("gdsloader p2p: --dst -3: a GPU ordinal is 0 or more (nvidia-smi -L lists them)", d.err().trim());
    }

    @Test
    void sizesThatAreNotMultiplesOf16BytesAreRefusedFirst() {
        CommandRun r = CommandRun.execute(new P2pCommand(), "--sizes", "1MiB,100", "--out", dir.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader p2p: --sizes: transfer size 100 bytes: must be a positive multiple of 16 bytes", r.err().trim());
    }

    @Test
    void theTableHasARowPerSizeAColumnPerWayAndMarksWhatWasNotExact() {
        PeerCopyBench.Report rep = new PeerCopyBench.Report(0, 1, "GPU 0", "GPU 1", false, "no peers", List.of(
                new PeerCopyBench.Row(1 << 20, PeerCopyBench.Way.HOST_STAGED, 200, 12.5, true),
                new PeerCopyBench.Row(1 << 20, PeerCopyBench.Way.PEER_OFF, 200, 11.25, false),
                new PeerCopyBench.Row(1 << 20, PeerCopyBench.Way.PINNED_TO_DEVICE, 200, 50, true)));
        List<String> lines = P2pCommand.table(rep).lines().toList();
        assertEquals(3, lines.size(), lines.toString());
        assertTrue(lines.get(0).startsWith("size") && lines.get(0).contains("PEER_ON") && lines.get(0).contains("KERNEL"));
        assertEquals(List.of("1.0", "MiB", "12.50", "11.25!", "-", "-", "50.00"), List.of(lines.get(1).trim().split("\\s+")));
        assertEquals("(GB/s = 1e9 bytes/s)", lines.get(2));
    }
}
