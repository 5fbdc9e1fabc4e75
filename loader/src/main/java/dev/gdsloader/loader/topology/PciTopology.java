package dev.gdsloader.loader.topology;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where PCI devices (GPUs, NVMe drives) sit in the machine's PCI tree, read from sysfs, and the path class between two
 * of them as {@code nvidia-smi topo -m} names it. Pure file reading: give it the real {@code /sys} ({@link #system()})
 * or a directory tree laid out like it ({@link #at(Path)}: {@code bus/pci/devices/<bdf>} links into
 * {@code devices/pci<domain>:<bus>/...}, {@code dev/block/<major>:<minor>} and {@code block/<name>} links to a block
 * device's directory, {@code numa_node} files), as the tests do.
 *
 * <p>A device's chain is its real path below {@code devices/}: the host bridge ({@code pci0000:00}), then every PCI
 * bridge (root port, switch ports) down to the device, e.g. {@code [pci0000:00, 0000:00:01.0, 0000:01:00.0,
 * 0000:02:00.0, 0000:03:00.0]}. Two devices' class follows from their common ancestor ({@link #pathClass}). A PCIe
 * switch shows as two levels (upstream and downstream port), so "a single bridge" ({@link PathClass#PIX}) means at
 * most one level between each device and the common ancestor, as NCCL counts a switch from sysfs.
 *
 * <p>Immutable and thread-safe; every method reads the files anew.
 */
public final class PciTopology {
    private static final Pattern BDF = Pattern.compile("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
    private final Path sys;

    private PciTopology(Path sys) {
        this.sys = sys;
    }

    /** @return the topology of this machine, from {@code /sys} */
    public static PciTopology system() {
        return new PciTopology(Path.of("/sys"));
    }

    /**
     * @param sysRoot a directory laid out like {@code /sys} (see the class comment)
     * @return the topology read from it
     */
    public static PciTopology at(Path sysRoot) {
        return new PciTopology(sysRoot);
    }

    /** @return the sysfs root read */
    public Path root() {
        return sys;
    }

    /**
     * Where one PCI device sits.
     *
     * @param busId its PCI bus id, lower case, 4-digit domain, as sysfs names it ({@code 0000:2a:00.0})
     * @param realPath the real path of its sysfs directory
     * @param chain the real path's names below {@code devices/}, host bridge first, the device last
     * @param numaNode its NUMA node from {@code numa_node}; -1 where the platform reports none or the file is absent
     */
    public record PciLocation(String busId, Path realPath, List<String> chain, int numaNode) {
        /** @throws IllegalArgumentException if the chain is empty */
        public PciLocation {
            chain = List.copyOf(chain);
            if (chain.isEmpty()) {
                throw new IllegalArgumentException(realPath + ": not below a sysfs devices/ directory");
            }
        }

        /** @return the host bridge (root complex) the device is below, e.g. {@code pci0000:00} */
        public String hostBridge() {
            return chain.get(0);
        }

        /** @return e.g. "0000:2a:00.0 (NUMA node 1) at pci0000:00/0000:00:01.0/0000:2a:00.0" */
        public String describe() {
            return busId + " (NUMA node " + (numaNode < 0 ? "not reported" : numaNode) + ") at " + String.join("/", chain);
        }
    }

    /**
     * The block device holding a path, and the PCI device(s) behind it.
     *
     * @param name the disk's name in {@code /sys/block} (a partition's whole disk, e.g. {@code nvme0n1} for
     *     {@code nvme0n1p1}), or the device's own name where it has no parent disk ({@code dm-0})
     * @param realPath the real path of its sysfs directory
     * @param pci the PCI devices behind it: one for a plain disk, each member's for a device-mapper or md device
     *     (from {@code slaves/}), none for a virtual device without PCI members
     */
    public record BlockDevice(String name, Path realPath, List<PciLocation> pci) {
        /** Copies the list. */
        public BlockDevice {
            pci = List.copyOf(pci);
        }
    }

    /**
     * @param busId a PCI bus id as CUDA or NVML print it ({@code 00000000:2A:00.0} or {@code 0000:2A:00.0})
     * @return the name sysfs gives it: lower case, a 4-digit domain ({@code 0000:2a:00.0})
     * @throws IllegalArgumentException if it is not a bus id
     */
    public static String sysfsName(String busId) {
        String id = busId.trim().toLowerCase(Locale.ROOT);
        int colon = id.indexOf(':');
        if (colon > 4 && id.substring(0, colon - 4).chars().allMatch(ch -> ch == '0')) {
            id = id.substring(colon - 4);
        } else if (colon >= 0 && colon < 4) {
            id = "0".repeat(4 - colon) + id;
        }
        if (!BDF.matcher(id).matches()) {
            throw new IllegalArgumentException("'" + busId + "' is not a PCI bus id (domain:bus:device.function, e.g. 0000:2a:00.0)");
        }
        return id;
    }

    /**
     * @param busId a PCI bus id ({@link #sysfsName} forms)
     * @return where it sits; empty if sysfs has no such device
     * @throws IllegalArgumentException if {@code busId} is not a bus id
     */
    public Optional<PciLocation> locate(String busId) {
        String id = sysfsName(busId);
        Path link = sys.resolve("bus/pci/devices").resolve(id);
        if (!Files.exists(link)) {
            return Optional.empty();
        }
        try {
            return Optional.of(location(id, link.toRealPath()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private PciLocation location(String id, Path real) throws IOException {
        return new PciLocation(id, real, chain(real), numaNode(real));
    }

    private List<String> chain(Path real) throws IOException {
        Path devices = sys.resolve("devices").toRealPath();
        if (!real.startsWith(devices)) {
            throw new IOException(real + " is not below " + devices);
        }
        List<String> names = new ArrayList<>();
        for (Path p : devices.relativize(real)) {
            names.add(p.toString());
        }
        return names;
    }

    private static int numaNode(Path deviceDir) {
        try {
            return Integer.parseInt(Files.readString(deviceDir.resolve("numa_node")).trim());
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /**
     * The path class between two PCI devices, by the rules of {@code nvidia-smi topo -m}: the same device
     * {@link PathClass#SELF}; below different host bridges {@link PathClass#SYS} when both report NUMA nodes and they
     * differ, else {@link PathClass#NODE}; below the same host bridge with the host bridge as their nearest common
     * ancestor {@link PathClass#PHB}; else {@link PathClass#PIX} when each is at most one level below the common
     * ancestor (one PCIe switch: its downstream port), {@link PathClass#PXB} otherwise (cascaded switches).
     *
     * @param a one device
     * @param b the other
     * @return the class (never {@link PathClass#NV}: NVLink is not in sysfs)
     */
    public static PathClass pathClass(PciLocation a, PciLocation b) {
        if (a.busId().equals(b.busId())) {
            return PathClass.SELF;
        }
        if (!a.hostBridge().equals(b.hostBridge())) {
            return a.numaNode() >= 0 && b.numaNode() >= 0 && a.numaNode() != b.numaNode() ? PathClass.SYS : PathClass.NODE;
        }
        int common = 0;
        while (common < a.chain().size() && common < b.chain().size() && a.chain().get(common).equals(b.chain().get(common))) {
            common++;
        }
        if (common <= 1) {
            return PathClass.PHB;
        }
        // levels strictly between each device and the common ancestor (the ancestor itself is one bridge)
        int belowA = Math.max(0, a.chain().size() - common - 1);
        int belowB = Math.max(0, b.chain().size() - common - 1);
        return belowA <= 1 && belowB <= 1 ? PathClass.PIX : PathClass.PXB;
    }

    /**
     * The block device holding {@code file}, from its file system's device number ({@code stat}'s {@code st_dev})
     * and {@code dev/block/<major>:<minor>}.
     *
     * @param file an existing file or directory
     * @return the block device; empty where the file system has none (tmpfs, overlay: major 0) or sysfs does not list it
     * @throws IOException if the file's attributes cannot be read
     */
    public Optional<BlockDevice> blockDeviceOf(Path file) throws IOException {
        long dev = ((Number) Files.getAttribute(file, "unix:dev")).longValue();
        long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
        if (major == 0) {
            return Optional.empty();
        }
        return blockDevice(major + ":" + minor);
    }

    /**
     * @param majorMinor a block device number, e.g. {@code 259:1}
     * @return the block device behind {@code dev/block/<majorMinor>}; empty if there is none
     */
    public Optional<BlockDevice> blockDevice(String majorMinor) {
        return blockAt(sys.resolve("dev/block").resolve(majorMinor));
    }

    /**
     * @param name a name in {@code block/}, e.g. {@code nvme0n1}
     * @return the block device; empty if there is none
     */
    public Optional<BlockDevice> blockDeviceNamed(String name) {
        return blockAt(sys.resolve("block").resolve(name));
    }

    private Optional<BlockDevice> blockAt(Path link) {
        if (!Files.exists(link)) {
            return Optional.empty();
        }
        try {
            Path real = link.toRealPath();
            // a partition's directory sits inside its disk's and has a "partition" file
            Path disk = Files.exists(real.resolve("partition")) && real.getParent() != null ? real.getParent() : real;
            Map<String, PciLocation> pci = new LinkedHashMap<>();
            collectPci(disk, pci, 0);
            return Optional.of(new BlockDevice(disk.getFileName().toString(), disk, new ArrayList<>(pci.values())));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The PCI device a block device's directory is below (its last bus id), else those of its slaves/ members. */
    private void collectPci(Path blockDir, Map<String, PciLocation> out, int depth) throws IOException {
        Path pciDir = null;
        for (Path p = blockDir; p != null && p.startsWith(sys.resolve("devices").toRealPath()); p = p.getParent()) {
            if (p.getFileName() != null && BDF.matcher(p.getFileName().toString()).matches()) {
                pciDir = p;
                break;
            }
        }
        if (pciDir != null) {
            String id = pciDir.getFileName().toString();
            out.putIfAbsent(id, location(id, pciDir));
            return;
        }
        Path slaves = blockDir.resolve("slaves");
        if (depth > 4 || !Files.isDirectory(slaves)) {
            return;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(slaves)) {
            for (Path member : s) {
                Path real = member.toRealPath();
                Path disk = Files.exists(real.resolve("partition")) && real.getParent() != null ? real.getParent() : real;
                collectPci(disk, out, depth + 1);
            }
        }
    }
}
