package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.path.ReadPath;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code latency} over real shards on disk: three loaders are built (two warm-ups), the path line is logged once. */
class LatencyBenchTest {
    @TempDir
    Path dir;

    @Test
    void autoSaysWhichPathItChoseOnceAndTheLoggerLevelIsRestored() throws Exception {
        SyntheticDataset.generate(dir, 1 << 20, 2, 4096, 5);
        Logger log = Logger.getLogger(GdsLoader.class.getName());
        Level unset = log.getLevel();
        log.setLevel(Level.INFO); // as -Dgdsloader.log=INFO: gds-loader logs WARNING and above by default
        Level before = log.getLevel();
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.INFO.intValue() && r.getMessage().startsWith("gdsloader path ")) {
                    lines.add(r.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(h);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            LatencyBench.run(dir, LoaderOptions.defaults().withBatchSize(16).withPath(ReadPath.AUTO).withDirectIo(false), 1,
                    new PrintStream(out, true, StandardCharsets.UTF_8));
        } finally {
            log.removeHandler(h);
        }
        assertEquals(1, lines.size(), "one INFO line for three loaders built: " + lines);
        assertEquals(before, log.getLevel());
        log.setLevel(unset);
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("heap allocated per batch"), out.toString(StandardCharsets.UTF_8));
    }
}
