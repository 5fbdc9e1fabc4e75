package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import java.io.PrintStream;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link PeerCopyBench} on the GPU: every way byte-exact, on one GPU (degenerate) and, where there are two, between them. */
@Tag("gpu")
class PeerCopyBenchGpuTest {
    private static final List<Long> SIZES = List.of(1L << 20, 3L << 20, 64L << 20);

    @Test
    void everyWayIsByteExactOnOneGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        PeerCopyBench.Report r = PeerCopyBench.run(0, 0, SIZES, new PrintStream(System.out, true));
        assertEquals(SIZES.size() * PeerCopyBench.Way.values().length, r.rows().size(), "every way at every size");
        assertTrue(r.allExact(), r.toString());
        assertTrue(r.rows().stream().allMatch(x -> x.gbps() > 0), r.toString());
    }

    @Test
    void everyWayIsByteExactBetweenTwoGpus() {
        assumeTrue(Cuda.availability().available() && Cuda.availability().deviceCount() >= 2, "needs two GPUs");
        PeerCopyBench.Report r = PeerCopyBench.run(0, 1, SIZES, new PrintStream(System.out, true));
        assertTrue(r.allExact(), r.toString());
        int ways = r.canAccessPeer() ? PeerCopyBench.Way.values().length : PeerCopyBench.Way.values().length - 2;
        assertEquals(SIZES.size() * ways, r.rows().size());
    }
}
