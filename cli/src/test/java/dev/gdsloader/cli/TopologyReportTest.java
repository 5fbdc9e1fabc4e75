package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.topology.PathClass;
import dev.gdsloader.loader.topology.PciTopology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Doctor's topology lines from a fake sysfs tree (real directories and symlinks) and given peer answers. */
class TopologyReportTest {
    @TempDir
    Path sys;

    private Path pci(String path, int numa) throws IOException {
        Path dir = Files.createDirectories(sys.resolve("devices").resolve(path));
        Files.writeString(dir.resolve("numa_node"), numa + "\n");
        Path bus = Files.createDirectories(sys.resolve("bus/pci/devices"));
        Files.createSymbolicLink(bus.resolve(dir.getFileName().toString()), bus.relativize(dir));
        return dir;
    }

    private static String value(List<String[]> lines, String key) {
        return lines.stream().filter(l -> l[0].equals(key)).map(l -> l[1]).findFirst()
                .orElseThrow(() -> new AssertionError("no line " + key));
    }

    @Test
    void twoGpusGiveTheMatrixAndTheirClassToTheDrive() throws IOException {
        pci("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", 0);
        pci("pci0000:80/0000:80:01.0/0000:81:00.0", 1);
        Path nvme = pci("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", 0);
        Path disk = Files.createDirectories(nvme.resolve("nvme/nvme0/nvme0n1"));
        Files.createDirectories(sys.resolve("block"));
        Files.createSymbolicLink(sys.resolve("block/nvme0n1"), sys.resolve("block").relativize(disk));
        PciTopology t = PciTopology.at(sys);
        List<TopologyReport.Gpu> gpus = List.of(new TopologyReport.Gpu(0, "00000000:03:00.0", 3, t.locate("0000:03:00.0")),
                new TopologyReport.Gpu(1, "00000000:81:00.0", 3, t.locate("0000:81:00.0")));
        TopologyReport.Pair[][] pairs = new TopologyReport.Pair[2][2];
        pairs[0][1] = new TopologyReport.Pair(true, 0, true, true, 18, Optional.of(PathClass.SYS), Optional.empty());
        pairs[1][0] = new TopologyReport.Pair(false, 1, false, false, 0, Optional.of(PathClass.SYS), Optional.empty());
        List<String[]> lines = TopologyReport.lines(gpus, pairs, "", t.blockDeviceNamed("nvme0n1"), "/data");
        List<String> gpuRows = lines.stream().filter(l -> l[0].equals("topology")).map(l -> l[1]).toList();
        assertEquals(List.of("GPU 0: PCI 00000000:03:00.0, NUMA node 0, 3 copy engines, at "
                        + "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0",
                "GPU 1: PCI 00000000:81:00.0, NUMA node 1, 3 copy engines, at pci0000:80/0000:80:01.0/0000:81:00.0"), gpuRows);
        assertTrue(value(lines, "GPU 0").startsWith("X "), value(lines, "GPU 0"));
        assertTrue(value(lines, "GPU 0").endsWith("NV18 peer yes rank 0 atom yes access yes"), value(lines, "GPU 0"));
        assertTrue(value(lines, "GPU 1").startsWith("SYS peer no rank 1 atom no access no"), value(lines, "GPU 1"));
        assertEquals("NVML answered for every GPU", value(lines, "NVLink"));
        List<String> toData = lines.stream().filter(l -> l[0].equals("GPU to data")).map(l -> l[1]).toList();
        assertEquals(List.of("GPU 0 -> nvme0n1: PIX", "GPU 1 -> nvme0n1: SYS"), toData);
        assertEquals("/data: nvme0n1, PCI 0000:04:00.0 (NUMA node 0) at pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/"
                + "0000:04:00.0", value(lines, "data device"));
        assertTrue(value(lines, "AUTO device").startsWith("GPU 0: nearest nvme0n1"), value(lines, "AUTO device"));
    }

    @Test
    void oneGpuGivesItsRowAndSaysPeerCopiesNeedTwo() throws IOException {
        pci("pci0000:00/0000:00:05.0", -1);
        PciTopology t = PciTopology.at(sys);
        List<String[]> lines = TopologyReport.lines(List.of(new TopologyReport.Gpu(0, "0000:00:05.0", 3, t.locate("0000:00:05.0"))),
                new TopologyReport.Pair[1][1], "0000:00:05.0: no NVLink (Not Supported (3))", Optional.empty(), "/dev/shm/d");
        assertEquals("GPU 0: PCI 0000:00:05.0, NUMA node not reported, 3 copy engines, at pci0000:00/0000:00:05.0",
                value(lines, "topology"));
        assertTrue(value(lines, "peer matrix").startsWith("one GPU: peer access and peer copies need two"));
        assertTrue(value(lines, "data device").contains("not on a block device"), value(lines, "data device"));
        assertTrue(value(lines, "NVLink").contains("no NVLink"));
        assertTrue(lines.stream().noneMatch(l -> l[0].equals("GPU to data")));
    }
}
