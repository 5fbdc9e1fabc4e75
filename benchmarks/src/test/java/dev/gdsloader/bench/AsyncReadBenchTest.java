package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.bench.AsyncReadBench.Comparison;
import dev.gdsloader.bench.AsyncReadBench.Mode;
import dev.gdsloader.bench.AsyncReadBench.Options;
import dev.gdsloader.cuda.Cuda;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host side of {@link AsyncReadBench} and {@link ReadRanges}: option checks, ranges, CRCs, verdicts. */
class AsyncReadBenchTest {
    @TempDir
    Path dir;

    private static Options options(List<Integer> threads, List<Integer> streams, List<Long> sizes, int rounds, int depth, int flags) {
        return new Options(threads, streams, sizes, List.of(Mode.WARM), rounds, depth, flags);
    }

    @Test
    void optionsRefuseBadValuesNamingTheOption() {
        List<Integer> one = List.of(1);
        List<Long> mib = List.of(1L << 20);
        assertMessage("--threads", () -> options(List.of(0), one, mib, 1, 1, 0));
        assertMessage("--streams", () -> options(one, List.of(), mib, 1, 1, 0));
        assertMessage("multiple of 4 KiB", () -> options(one, one, List.of(1000L), 1, 1, 0));
        assertMessage("up to 1 GiB", () -> options(one, one, List.of(2L << 30), 1, 1, 0));
        assertMessage("--rounds", () -> options(one, one, mib, 0, 1, 0));
        assertMessage("--depth", () -> options(one, one, mib, 1, 0, 0));
        assertMessage("--stream-flags", () -> options(one, one, mib, 1, 1, 16));
        assertMessage("--modes", () -> new Options(one, one, mib, List.of(), 1, 1, 0));
        assertEquals(32, options(List.of(1, 16), List.of(1, 8), mib, 5, 4, 7).slots(), "max(16 threads, 8 streams x depth 4)");
    }

    private static void assertMessage(String part, org.junit.jupiter.api.function.Executable e) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        assertTrue(x.getMessage().contains(part), x.getMessage());
    }

    @Test
    void rangesCoverEveryByteOfEveryFileOnceInFileOrder() throws IOException {
        Files.write(dir.resolve("b.bin"), new byte[10_000]);
        Files.write(dir.resolve("a.bin"), new byte[8192]);
        Files.write(dir.resolve("empty.bin"), new byte[0]);
        Files.write(dir.resolve(".hidden"), new byte[5]);
        Files.createDirectory(dir.resolve("sub"));
        List<Path> files = ReadRanges.filesOf(dir);
        assertEquals(List.of(dir.resolve("a.bin"), dir.resolve("b.bin")), files);
        ReadRanges r = ReadRanges.of(files, 4096);
        assertEquals(List.of(new ReadRanges.Range(0, 0, 4096), new ReadRanges.Range(0, 4096, 4096),
                new ReadRanges.Range(1, 0, 4096), new ReadRanges.Range(1, 4096, 4096), new ReadRanges.Range(1, 8192, 1808)),
                r.ranges());
        assertEquals(18_192, r.totalBytes());
        assertEquals(4096, r.maxLength());
        assertEquals(List.of(dir.resolve("a.bin")), ReadRanges.filesOf(dir.resolve("a.bin")));
    }

    @Test
    void aMissingPathOrADirectoryWithoutFilesIsAnError() throws IOException {
        assertThrows(java.nio.file.NoSuchFileException.class, () -> ReadRanges.filesOf(dir.resolve("nope")));
        IOException e = assertThrows(IOException.class, () -> ReadRanges.filesOf(dir));
        assertTrue(e.getMessage().contains("no non-empty regular files"), e.getMessage());
        Path empty = Files.write(dir.resolve("empty"), new byte[0]);
        assertThrows(IOException.class, () -> ReadRanges.filesOf(empty));
    }

    @Test
    void expectedCrcsAreTheCrc32OfEachRequestsBytes() throws IOException {
        byte[] data = new byte[3 * (1 << 20) + 5];
        new Random(1).nextBytes(data);
        Path f = Files.write(dir.resolve("d.bin"), data);
        ReadRanges r = ReadRanges.of(List.of(f), 1 << 20);
        long[] crc = r.expectedCrc32();
        assertEquals(4, crc.length);
        for (int i = 0; i < crc.length; i++) {
            ReadRanges.Range x = r.ranges().get(i);
            CRC32 c = new CRC32();
            c.update(Arrays.copyOfRange(data, (int) x.offset(), (int) (x.offset() + x.length())));
            assertEquals(c.getValue(), crc[i], "range " + i);
        }
    }

    @Test
    void theVerdictKeepsTheFasterReaderAndTheSummaryCountsThem() {
        Comparison slower = new Comparison(Mode.WARM, 1 << 20, 16, 40.0, 8, 20.0);
        assertEquals(0.5, slower.ratio(), 1e-12);
        assertTrue(slower.keep().startsWith("threaded cuFileRead (16 threads)"), slower.keep());
        Comparison faster = new Comparison(Mode.DIRECT, 64 << 10, 4, 1.5, 4, 1.8);
        assertTrue(faster.keep().startsWith("cuFileReadAsync on 4 streams"), faster.keep());
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        AsyncReadBench.printSummary(List.of(slower, faster), new PrintStream(b, true, StandardCharsets.UTF_8));
        String out = b.toString(StandardCharsets.UTF_8);
        assertTrue(out.contains("warm 1 MiB 0.50; direct 64 KiB 1.20\n"), out);
        assertTrue(out.contains("cuFileReadAsync in 1 of 2 settings, threaded cuFileRead in 1"), out);
    }

    @Test
    void withoutAGpuTheReasonIsTheProbes() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here");
        String why = AsyncReadBench.unavailableReason(dir).orElseThrow();
        assertTrue(why.startsWith("no GPU: "), why);
    }
}
