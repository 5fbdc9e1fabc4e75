package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.loader.dataset.Dataset;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gdsloader subcommands run in this JVM against real files. */
class CommandsTest {
    @TempDir
    Path dir;

    private static void assumeNoGpu() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; this checks the no-GPU output");
    }

    /** The shard files of a directory (not the dataset.json manifest written beside them). */
    private static List<Path> list(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".npy")).sorted().toList();
        }
    }

    /** IDX bytes: magic {@code 00 00 08 ndims} (unsigned byte), big-endian dims, data. */
    static byte[] idxUbyte(int[] dims, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4 + 4 * dims.length + data.length);
        b.put((byte) 0).put((byte) 0).put((byte) 0x08).put((byte) dims.length);
        for (int d : dims) {
            b.putInt(d);
        }
        b.put(data);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(b.array());
        }
        return out.toByteArray();
    }

    private static byte[] dataBytes(Path npy) throws IOException {
        byte[] all = Files.readAllBytes(npy);
        return Arrays.copyOfRange(all, (int) NpyShard.open(npy).dataOffset(), all.length);
    }

    @Test
    void generateWritesTheRequestedShards() throws IOException {
        Path out = dir.resolve("gen");
        CommandRun r = CommandRun.execute(new GenerateCommand(),
                "--out", out.toString(), "--size", "4MiB", "--shards", "2", "--record-bytes", "1000");
        assertEquals(0, r.exitCode(), r.toString());
        assertEquals(List.of(out.resolve("data-00000.npy"), out.resolve("data-00001.npy")), list(out));
        assertTrue(Files.exists(out.resolve("dataset.json")), "the manifest is written beside the shards");
        for (Path f : list(out)) {
            NpyShard s = NpyShard.open(f);
            assertEquals(DType.UINT8, s.dtype());
            assertEquals(1000, s.recordBytes());
            assertEquals((4L << 20) / 2 / 1000, s.recordCount());
        }
        assertTrue(r.out().contains("wrote 2 shards"), r.toString());
    }

    @Test
    void generateWithoutOutIsAUsageError() {
        CommandRun r = CommandRun.execute(new GenerateCommand(), "--size", "4MiB");
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().contains("--out"), r.toString());
    }

    @Test
    void convertIdxWritesShardsOfImagesAndLabels() throws IOException {
        byte[] pixels = new byte[5 * 2 * 3];
        for (int i = 0; i < pixels.length; i++) {
            pixels[i] = (byte) (i * 11);
        }
        byte[] labels = {9, 8, 7, 6, 5};
        Path images = Files.write(dir.resolve("train-images-idx3-ubyte.gz"), idxUbyte(new int[] {5, 2, 3}, pixels));
        Path lbls = Files.write(dir.resolve("train-labels-idx1-ubyte.gz"), idxUbyte(new int[] {5}, labels));
        Path out = dir.resolve("npy");
        CommandRun r = CommandRun.execute(new ConvertCommand(), "idx", "--out", out.toString(), "--records-per-shard", "2",
                images.toString(), lbls.toString());
        assertEquals(0, r.exitCode(), r.toString());
        Path train = out.resolve("train");
        assertEquals(List.of(train.resolve("images-00000.npy"), train.resolve("images-00001.npy"), train.resolve("images-00002.npy"),
                train.resolve("labels-00000.npy"), train.resolve("labels-00001.npy"), train.resolve("labels-00002.npy")), list(train));
        NpyShard first = NpyShard.open(train.resolve("images-00000.npy"));
        assertEquals(DType.UINT8, first.dtype());
        assertArrayEquals(new long[] {2, 3}, first.recordShape());
        assertEquals(2, first.recordCount());
        assertArrayEquals(Arrays.copyOfRange(pixels, 0, 12), dataBytes(train.resolve("images-00000.npy")));
        assertArrayEquals(Arrays.copyOfRange(pixels, 24, 30), dataBytes(train.resolve("images-00002.npy")));
        assertArrayEquals(new byte[] {5}, dataBytes(train.resolve("labels-00002.npy")));
        Dataset d = Dataset.open(train);
        assertEquals(5, d.recordCount());
        assertTrue(r.out().contains("train-images-idx3-ubyte.gz -> 3 shards"), r.toString());
    }

    @Test
    void convertIdxRefusesImagesAndLabelsOfDifferentCountsNamingBothAndWritesNothing() throws IOException {
        Path images = Files.write(dir.resolve("train-images-idx3-ubyte.gz"), idxUbyte(new int[] {4, 2, 3}, new byte[24]));
        Path lbls = Files.write(dir.resolve("train-labels-idx1-ubyte.gz"), idxUbyte(new int[] {6}, new byte[6]));
        Path out = dir.resolve("mismatch");
        CommandRun r = CommandRun.execute(new ConvertCommand(), "idx", "--out", out.toString(), images.toString(), lbls.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().contains(images + " holds 4 records but " + lbls + " holds 6"), r.toString());
        assertFalse(Files.exists(out.resolve("train").resolve("images-00000.npy")), "nothing written: " + r);
        // a split that already lists 4 images refuses 6 labels added later, naming the manifest's count
        assertEquals(0, CommandRun.execute(new ConvertCommand(), "idx", "--out", out.toString(), images.toString()).exitCode());
        CommandRun later = CommandRun.execute(new ConvertCommand(), "idx", "--out", out.toString(), lbls.toString());
        assertEquals(2, later.exitCode(), later.toString());
        assertTrue(later.err().contains("lists 4 records of column 'images' but " + lbls + " holds 6"), later.toString());
        assertFalse(Files.exists(out.resolve("train").resolve("labels-00000.npy")), later.toString());
    }

    @Test
    void benchOverADatasetPrintsAVerifiedHostRowAndWhyNoGpuPathRan() throws IOException {
        assumeNoGpu();
        Path data = dir.resolve("bench");
        assertEquals(0, CommandRun.execute(new GenerateCommand(),
                "--out", data.toString(), "--size", "4MiB", "--shards", "3", "--record-bytes", "150528").exitCode());
        CommandRun r = CommandRun.execute(new BenchCommand(), data.toString(), "--threads", "2",
                "--batch-bytes", "1MiB", "--io-size", "256KiB");
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("HOST") && l.contains(" OK ")), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("no GPU path ran")), r.toString());
        assertTrue(r.out().lines().noneMatch(l -> l.startsWith("BOUNCE") || l.startsWith("GDS")), r.toString());
        assertTrue(Files.exists(data.resolve("data-00000.npy")), "bench leaves a given dataset alone");
    }

    @Test
    void benchWithoutDataGeneratesInTheWorkDirectoryAndDeletesItAfterwards() throws IOException {
        Path work = Files.createDirectories(dir.resolve("work"));
        CommandRun r = CommandRun.execute(new BenchCommand(), "--size", "4MiB", "--work-dir", work.toString(),
                "--paths", "HOST", "--threads", "2", "--batch-bytes", "1MiB", "--io-size", "256KiB");
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("generating 4.0 MiB of synthetic .npy shards in " + work), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("HOST") && l.contains(" OK ")), r.toString());
        assertEquals(List.of(), list(work), "the generated dataset is removed");
    }

    @Test
    void benchOnADirectoryWithoutShardsFailsNamingIt() throws IOException {
        Path empty = Files.createDirectories(dir.resolve("nothing-here"));
        CommandRun r = CommandRun.execute(new BenchCommand(), empty.toString());
        assertTrue(r.exitCode() != 0, r.toString());
        assertTrue(r.err().contains(empty.toString()), r.toString());
    }

    @Test
    void benchRejectsAnUnknownPath() {
        CommandRun r = CommandRun.execute(new BenchCommand(), dir.toString(), "--paths", "FLOPPY");
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().contains("FLOPPY"), r.toString());
    }

    @Test
    void checksumPrintsTheZlibCrc32OfEveryColumnAsTheHostPathDeliveredIt() throws IOException {
        Path data = dir.resolve("ck");
        assertEquals(0, CommandRun.execute(new GenerateCommand(),
                "--out", data.toString(), "--size", "300000", "--shards", "3", "--record-bytes", "4099").exitCode());
        CRC32 want = new CRC32();
        for (Path f : list(data)) {
            want.update(dataBytes(f));
        }
        CommandRun r = CommandRun.execute(new ChecksumCommand(), data.toString(), "--path", "HOST", "--batch-size", "7");
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("crc32=" + want.getValue()), r + "\nexpected crc32=" + want.getValue());
        assertTrue(r.out().contains("via HOST"), r.toString());
    }

    @Test
    void doctorReportsNoGpuAndThatAutoTakesTheHostPath() throws IOException {
        assumeNoGpu();
        CommandRun r = CommandRun.execute(new DoctorCommand(), "--data", dir.toString());
        assertEquals(0, r.exitCode(), r.toString());
        String auto = r.out().lines().filter(l -> l.trim().startsWith("AUTO path")).findFirst().orElse("");
        assertTrue(auto.contains("HOST"), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("GPU") && l.contains("none")), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("O_DIRECT") && l.contains(dir.toString())), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("cuFile mode") && l.contains("UNAVAILABLE")), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().startsWith("memory budget   host ")
                && l.contains("half of this machine's") && l.contains("device unlimited")), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().equals("memory held     device 0 B, pinned 0 B, host 0 B, "
                + "host-registered 0 B, cufile-registered 0 B")), "the O_DIRECT probe's memory came back: " + r);
        assertEquals(List.of(), list(dir), "doctor leaves no probe files behind");
        String why = dev.gdsloader.cuda.Cuda.availability().reason();
        assertTrue(r.out().lines().anyMatch(l -> l.trim().equals("host register   not checked: no GPU (" + why + ")")), r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.trim().equals("GPU NUMA node   not known: no GPU (" + why + ")")), r.toString());
    }

    @Test
    void doctorReadsTheGpusNumaNodeFromSysfsByItsLowerCasedBusId() throws IOException {
        Path pci = dir.resolve("pci");
        Files.createDirectories(pci.resolve("0000:2a:00.0"));
        Files.writeString(pci.resolve("0000:2a:00.0/numa_node"), "1\n");
        Files.createDirectories(pci.resolve("0000:3b:00.0"));
        Files.writeString(pci.resolve("0000:3b:00.0/numa_node"), "-1\n");
        assertEquals("node 1 (" + pci.resolve("0000:2a:00.0/numa_node") + ")", DoctorCommand.numaNode("0000:2A:00.0", pci));
        assertEquals("node 1 (" + pci.resolve("0000:2a:00.0/numa_node") + ")", DoctorCommand.numaNode("00000000:2A:00.0", pci));
        assertTrue(DoctorCommand.numaNode("0000:3B:00.0", pci).startsWith("none reported ("), "-1 is no affinity");
        String missing = DoctorCommand.numaNode("0000:99:00.0", pci);
        assertTrue(missing.startsWith("not known: cannot read " + pci.resolve("0000:99:00.0/numa_node")), missing);
    }
}
