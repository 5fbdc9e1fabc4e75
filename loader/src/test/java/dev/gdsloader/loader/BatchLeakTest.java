package dev.gdsloader.loader;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.memory.LeakDetector;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reference counting and leak reports of batches. */
class BatchLeakTest {
    @TempDir
    Path dir;

    @Test
    void aRetainedBatchKeepsItsSlotUntilTheLastRelease() throws IOException {
        TestShards.writeImages(dir, 6);
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(2).path(ReadPath.HOST).prefetchDepth(2).build()) {
            Iterator<Batch> it = loader.iterator();
            Batch first = it.next().retain();
            assertEquals(2, first.refCount());
            first.close();
            assertEquals(1, first.refCount(), "one owner left");
            first.close();
            assertEquals(0, first.refCount());
            assertThrows(dev.gdsloader.memory.IllegalReferenceCountException.class, first::close, "a release past zero");
            assertThrows(dev.gdsloader.memory.IllegalReferenceCountException.class, first::retain);
            int n = 1;
            while (it.hasNext()) {
                it.next().close();
                n++;
            }
            assertEquals(3, n, "the slot came back, so the epoch finished");
        }
    }

    @Test
    void anUnreleasedBatchIsReportedWithItsAllocationSiteUnderParanoid() throws Exception {
        String out = runLeakingConsumer("-D" + LeakDetector.LEVEL_PROPERTY + "=paranoid");
        assertTrue(out.contains("LEAK: batch 0 of epoch 0"), out);
        // the allocation site: the consumer's own frame that took the batch
        assertTrue(out.contains("at dev.gdsloader.loader.BatchLeakTest$LeakingConsumer.takeAndDrop"), out);
    }

    @Test
    void theOldSwitchStillMeansParanoid() throws Exception {
        String out = runLeakingConsumer("-D" + LeakDetector.PROPERTY + "=true");
        assertTrue(out.contains("LEAK: batch 0 of epoch 0") && out.contains("LeakingConsumer"), out);
    }

    /** The detector reads its properties once per JVM: a child JVM runs with them. */
    private String runLeakingConsumer(String property) throws Exception {
        TestShards.writeImages(dir, 4);
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                property,
                "@" + Objects.requireNonNull(System.getProperty("gds.jvm.flags"),
                        "system property gds.jvm.flags: bin/jvm-flags (the root pom sets it)"),
                "-cp", System.getProperty("java.class.path"), LeakingConsumer.class.getName(), dir.toString())
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM finished");
        String out = new String(p.getInputStream().readAllBytes(), UTF_8);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    /** Takes one batch, drops it without releasing, and waits for the leak report. */
    public static final class LeakingConsumer {
        public static void main(String[] args) throws Exception {
            try (GdsLoader loader = GdsLoader.builder(Path.of(args[0])).batchSize(2).path(ReadPath.HOST).build()) {
                Iterator<Batch> it = loader.iterator();
                takeAndDrop(it);
                for (int i = 0; i < 50 && LeakDetector.leaksReported() == 0; i++) {
                    System.gc();
                    Thread.sleep(50);
                }
                System.exit(LeakDetector.leaksReported() == 1 ? 0 : 3);
            }
        }

        private static void takeAndDrop(Iterator<Batch> it) {
            it.next();
        }
    }
}
