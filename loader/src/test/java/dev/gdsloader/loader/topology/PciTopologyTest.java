package dev.gdsloader.loader.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PciTopology} on sysfs trees written to a temporary directory (real directories, real relative symlinks as
 * sysfs has them), and on this machine's {@code /sys}.
 */
class PciTopologyTest {
    @TempDir
    Path sys;

    /** Makes {@code devices/<path>} with a numa_node file and the {@code bus/pci/devices/<last>} link to it. */
    private Path pci(String path, int numa) throws IOException {
        Path dir = Files.createDirectories(sys.resolve("devices").resolve(path));
        Files.writeString(dir.resolve("numa_node"), numa + "\n");
        String id = dir.getFileName().toString();
        Path bus = Files.createDirectories(sys.resolve("bus/pci/devices"));
        Files.createSymbolicLink(bus.resolve(id), bus.relativize(dir)); // ../../../devices/..., as sysfs links it
        return dir;
    }

    private static final String SWITCH = "pci0000:00/0000:00:01.0/0000:01:00.0";

    /**
     * A machine with: GPU 0 and GPU 1 under one PCIe switch (PIX); GPU 2 on another root port of the same host bridge
     * (PHB); GPU 3 behind cascaded switches (PXB to GPU 0); GPU 4 below another host bridge of NUMA node 0 (NODE); an
     * NVMe drive below a host bridge of NUMA node 1 (SYS to the rest), with a partition; a device-mapper volume over
     * that partition; and a virtio disk with no partition.
     */
    private PciTopology machine() throws IOException {
        pci(SWITCH + "/0000:02:00.0/0000:03:00.0", 0);
        pci(SWITCH + "/0000:02:01.0/0000:04:00.0", 0);
        pci("pci0000:00/0000:00:02.0/0000:05:00.0", 0);
        pci("pci0000:00/0000:00:03.0/0000:06:00.0/0000:07:00.0/0000:08:00.0/0000:09:00.0/0000:0a:00.0", 0);
        pci("pci0000:00/0000:00:03.0/0000:06:00.0/0000:07:01.0/0000:0b:00.0/0000:0c:00.0/0000:0d:00.0", 0);
        pci("pci0000:40/0000:40:01.0/0000:41:00.0", 0);
        Path nvme = pci("pci0000:80/0000:80:01.0/0000:81:00.0", 1);
        Path disk = Files.createDirectories(nvme.resolve("nvme/nvme0/nvme0n1"));
        Path part = Files.createDirectories(disk.resolve("nvme0n1p1"));
        Files.writeString(part.resolve("partition"), "1\n");
        Path dm = Files.createDirectories(sys.resolve("devices/virtual/block/dm-0/slaves"));
        Files.createSymbolicLink(dm.resolve("nvme0n1p1"), dm.relativize(part));
        Path virtio = Files.createDirectories(sys.resolve("devices/pci0000:00/0000:00:04.0/virtio1/block/vda"));
        Path devBlock = Files.createDirectories(sys.resolve("dev/block"));
        Files.createSymbolicLink(devBlock.resolve("259:1"), devBlock.relativize(part));
        Files.createSymbolicLink(devBlock.resolve("253:0"), devBlock.relativize(dm.getParent()));
        Path block = Files.createDirectories(sys.resolve("block"));
        Files.createSymbolicLink(block.resolve("nvme0n1"), block.relativize(disk));
        Files.createSymbolicLink(block.resolve("vda"), block.relativize(virtio));
        Files.createDirectories(sys.resolve("devices/virtual/block/loop0"));
        Files.createSymbolicLink(devBlock.resolve("7:0"), devBlock.relativize(sys.resolve("devices/virtual/block/loop0")));
        return PciTopology.at(sys);
    }

    private static PciTopology.PciLocation at(PciTopology t, String busId) {
        return t.locate(busId).orElseThrow(() -> new AssertionError(busId + " not located"));
    }

    @Test
    void busIdsAreNamedAsSysfsNamesThem() {
        assertEquals("0000:2a:00.0", PciTopology.sysfsName("00000000:2A:00.0"));
        assertEquals("0000:2a:00.0", PciTopology.sysfsName("0000:2A:00.0"));
        assertEquals("0000:2a:00.0", PciTopology.sysfsName(" 0:2a:00.0 "));
        assertThrows(IllegalArgumentException.class, () -> PciTopology.sysfsName("2a:00"));
        assertEquals("0001:2a:00.0", PciTopology.sysfsName("00000001:2A:00.0"));
        assertThrows(IllegalArgumentException.class, () -> PciTopology.sysfsName("00010000:2A:00.0"), "a domain beyond 4 digits");
    }

    @Test
    void locatesByRealPathWithChainAndNumaNode() throws IOException {
        PciTopology t = machine();
        PciTopology.PciLocation gpu0 = at(t, "00000000:03:00.0");
        assertEquals(List.of("pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"), gpu0.chain());
        assertEquals("pci0000:00", gpu0.hostBridge());
        assertEquals(0, gpu0.numaNode());
        assertEquals(1, at(t, "0000:81:00.0").numaNode());
        assertEquals(Optional.empty(), t.locate("0000:99:00.0"));
    }

    @Test
    void pathClassesFollowNvidiaSmiTopo() throws IOException {
        PciTopology t = machine();
        PciTopology.PciLocation gpu0 = at(t, "0000:03:00.0");
        assertEquals(PathClass.SELF, PciTopology.pathClass(gpu0, at(t, "0000:03:00.0")));
        assertEquals(PathClass.PIX, PciTopology.pathClass(gpu0, at(t, "0000:04:00.0")), "one switch");
        assertEquals(PathClass.PHB, PciTopology.pathClass(gpu0, at(t, "0000:05:00.0")), "through the host bridge");
        assertEquals(PathClass.PXB, PciTopology.pathClass(at(t, "0000:0a:00.0"), at(t, "0000:0d:00.0")), "cascaded switches");
        assertEquals(PathClass.NODE, PciTopology.pathClass(gpu0, at(t, "0000:41:00.0")), "two host bridges, one node");
        assertEquals(PathClass.SYS, PciTopology.pathClass(gpu0, at(t, "0000:81:00.0")), "two NUMA nodes");
        assertEquals(PciTopology.pathClass(at(t, "0000:04:00.0"), gpu0), PciTopology.pathClass(gpu0, at(t, "0000:04:00.0")));
    }

    @Test
    void unknownNumaNodesBelowTwoHostBridgesAreNode() throws IOException {
        pci("pci0000:00/0000:00:01.0", -1);
        pci("pci0000:80/0000:80:01.0", -1);
        PciTopology t = PciTopology.at(sys);
        assertEquals(PathClass.NODE, PciTopology.pathClass(at(t, "0000:00:01.0"), at(t, "0000:80:01.0")));
    }

    @Test
    void blockDevicesResolveToTheirDiskAndPciDevice() throws IOException {
        PciTopology t = machine();
        PciTopology.BlockDevice part = t.blockDevice("259:1").orElseThrow();
        assertEquals("nvme0n1", part.name(), "a partition is named by its disk");
        assertEquals(List.of("0000:81:00.0"), part.pci().stream().map(PciTopology.PciLocation::busId).toList());
        PciTopology.BlockDevice dm = t.blockDevice("253:0").orElseThrow();
        assertEquals("dm-0", dm.name());
        assertEquals(List.of("0000:81:00.0"), dm.pci().stream().map(PciTopology.PciLocation::busId).toList(), "from slaves/");
        PciTopology.BlockDevice vda = t.blockDeviceNamed("vda").orElseThrow();
        assertEquals(List.of("0000:00:04.0"), vda.pci().stream().map(PciTopology.PciLocation::busId).toList());
        assertTrue(t.blockDevice("7:0").orElseThrow().pci().isEmpty(), "a loop device has no PCI device");
        assertFalse(t.blockDevice("8:0").isPresent());
    }

    @Test
    void placementPrefersTheGpuNearestTheDrive() throws IOException {
        PciTopology t = machine();
        // the drive shares the switch of GPU 1 in this second machine: GPU 1 wins over GPU 0
        Path nvme2 = pci(SWITCH + "/0000:02:02.0/0000:0e:00.0", 0);
        Path disk = Files.createDirectories(nvme2.resolve("nvme/nvme1/nvme1n1"));
        Files.createSymbolicLink(sys.resolve("block/nvme1n1"), sys.resolve("block").relativize(disk));
        List<DevicePlacement.Gpu> gpus = List.of(new DevicePlacement.Gpu(0, t.locate("0000:05:00.0")),
                new DevicePlacement.Gpu(1, t.locate("0000:04:00.0")), new DevicePlacement.Gpu(2, t.locate("0000:41:00.0")));
        DevicePlacement.Choice c = DevicePlacement.nearest(gpus, t.blockDeviceNamed("nvme1n1"), "/data");
        assertEquals(1, c.ordinal(), c.reason());
        assertEquals(Optional.of(PathClass.PIX), c.pathClass());
        assertTrue(c.reason().contains("GPU 0 PHB") && c.reason().contains("GPU 1 PIX") && c.reason().contains("GPU 2 NODE"),
                c.reason());
        // the first drive is on NUMA node 1: every GPU above is SYS to it (a tie: GPU 0), a GPU below its host bridge PHB
        assertEquals(0, DevicePlacement.nearest(gpus, t.blockDevice("259:1"), "/data").ordinal());
        pci("pci0000:80/0000:80:02.0/0000:82:00.0", 1);
        DevicePlacement.Choice d = DevicePlacement.nearest(List.of(gpus.get(0), new DevicePlacement.Gpu(1, t.locate("0000:82:00.0"))),
                t.blockDevice("259:1"), "/data");
        assertEquals(1, d.ordinal(), d.reason());
        assertEquals(Optional.of(PathClass.PHB), d.pathClass());
        // ties go to the lowest ordinal; no block device or no located GPU: the lowest ordinal, saying why
        List<DevicePlacement.Gpu> twins = List.of(new DevicePlacement.Gpu(3, t.locate("0000:03:00.0")),
                new DevicePlacement.Gpu(1, t.locate("0000:04:00.0")));
        assertEquals(1, DevicePlacement.nearest(twins, t.blockDevice("259:1"), "/data").ordinal());
        DevicePlacement.Choice none = DevicePlacement.nearest(twins, Optional.empty(), "/dev/shm/x");
        assertEquals(1, none.ordinal());
        assertTrue(none.reason().contains("not on a block device"), none.reason());
        DevicePlacement.Choice loop = DevicePlacement.nearest(twins, t.blockDevice("7:0"), "/data");
        assertTrue(loop.reason().contains("no PCI device"), loop.reason());
        DevicePlacement.Choice unlocated = DevicePlacement.nearest(List.of(new DevicePlacement.Gpu(0, Optional.empty())),
                t.blockDevice("259:1"), "/data");
        assertEquals(Optional.empty(), unlocated.pathClass());
        assertThrows(IllegalArgumentException.class, () -> DevicePlacement.nearest(List.of(), Optional.empty(), "/data"));
    }

    /** This machine's sysfs: every PCI device located, its chain ending with itself, the working tree's disk found. */
    @Test
    void readsThisMachinesSysfs() throws IOException {
        Path bus = Path.of("/sys/bus/pci/devices");
        Assumptions.assumeTrue(Files.isDirectory(bus), "no /sys/bus/pci here");
        PciTopology t = PciTopology.system();
        int n = 0;
        try (Stream<Path> s = Files.list(bus)) {
            for (Path p : s.toList()) {
                PciTopology.PciLocation l = at(t, p.getFileName().toString());
                assertEquals(p.getFileName().toString(), l.chain().get(l.chain().size() - 1));
                assertTrue(l.hostBridge().startsWith("pci"), l.describe());
                assertEquals(PathClass.SELF, PciTopology.pathClass(l, l));
                n++;
            }
        }
        assertTrue(n > 0);
        Path here = Path.of("").toAbsolutePath();
        long dev = ((Number) Files.getAttribute(here, "unix:dev")).longValue();
        Optional<PciTopology.BlockDevice> b = t.blockDeviceOf(here);
        if ((dev >>> 8 & 0xfff) != 0 && Files.exists(Path.of("/sys/dev/block"))) {
            assertTrue(b.isPresent(), "the working directory's block device");
            assertTrue(Files.isDirectory(Path.of("/sys/block", b.get().name())), b.get().name() + " in /sys/block");
        }
    }
}
