package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link PeerCopyBench}'s sizes, pattern and report files, without a GPU. */
class PeerCopyBenchTest {
    @TempDir
    Path dir;

    @Test
    void sizesAreCheckedAndSmallTransfersRepeat() {
        PeerCopyBench.checkSizes(List.of(16L, 1L << 20, 1L << 30));
        assertThrows(IllegalArgumentException.class, () -> PeerCopyBench.checkSizes(List.of()));
        assertThrows(IllegalArgumentException.class, () -> PeerCopyBench.checkSizes(List.of(1L << 20, 24L)));
        assertThrows(IllegalArgumentException.class, () -> PeerCopyBench.checkSizes(List.of(0L)));
        assertEquals(PeerCopyBench.MAX_TRANSFERS, PeerCopyBench.transfers(1L << 20));
        assertEquals(32, PeerCopyBench.transfers(64L << 20));
        assertEquals(3, PeerCopyBench.transfers(1L << 30));
        assertEquals("1 MiB", PeerCopyBench.size(1L << 20));
        assertEquals("1 GiB", PeerCopyBench.size(1L << 30));
    }

    @Test
    void thePatternHasNoRepeatedWordSoAMisplacedChunkIsCaught() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate((8L << 20) + 5);
            PeerCopyBench.fill(m);
            Set<Long> words = new HashSet<>();
            for (long i = 0; i < (8L << 20) / 8; i++) {
                assertTrue(words.add(m.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i)), "word " + i + " repeats");
            }
        }
    }

    @Test
    void writesJsonAndPng() throws Exception {
        PeerCopyBench.Report rep = new PeerCopyBench.Report(0, 0, "GPU 0 x", "GPU 0 x", false, "one GPU", List.of(
                new PeerCopyBench.Row(1 << 20, PeerCopyBench.Way.HOST_STAGED, 200, 12.5, true),
                new PeerCopyBench.Row(1 << 30, PeerCopyBench.Way.HOST_STAGED, 3, 25, true),
                new PeerCopyBench.Row(1 << 20, PeerCopyBench.Way.PEER_ON, 200, 400, true),
                new PeerCopyBench.Row(1 << 30, PeerCopyBench.Way.PEER_ON, 3, 800, true)));
        List<Path> files = PeerCopyBench.write(rep, "gdsloader p2p --same-device", dir.resolve("out"));
        Path json = dir.resolve("out/p2p.json");
        assertEquals(json, files.get(0));
        String text = Files.readString(json);
        assertTrue(text.contains("\"way\" : \"PEER_ON\"") && text.contains("\"gbps\" : 800.0")
                && text.contains("\"command\" : \"gdsloader p2p --same-device\""), text);
        if (files.size() == 2) { // a runtime with AWT: the chart
            assertTrue(Files.size(files.get(1)) > 1000);
        }
    }
}
