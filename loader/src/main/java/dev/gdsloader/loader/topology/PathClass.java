package dev.gdsloader.loader.topology;

/**
 * How two PCI devices of one machine reach each other, in the classes {@code nvidia-smi topo -m} prints (and NCCL's
 * {@code NCCL_P2P_LEVEL} caps peer copies by), nearest first. {@link #NV} comes from NVML (NVLink), the PCI classes
 * from sysfs ({@link PciTopology#pathClass}).
 */
public enum PathClass {
    /** The same device ({@code X} in {@code nvidia-smi topo -m}). */
    SELF("X"),
    /** Joined by NVLink (shown as {@code NV#}, # the number of links). */
    NV("NV"),
    /** Through at most a single PCIe bridge (one PCIe switch, or functions of one device). */
    PIX("PIX"),
    /** Through several PCIe bridges (cascaded switches), without the PCIe host bridge. */
    PXB("PXB"),
    /** Through a PCIe host bridge (the CPU's root complex): both below the same host bridge. */
    PHB("PHB"),
    /** Through the interconnect between PCIe host bridges of one NUMA node. */
    NODE("NODE"),
    /** Through the SMP interconnect between NUMA nodes (QPI/UPI, Infinity Fabric between sockets). */
    SYS("SYS");

    private final String label;

    PathClass(String label) {
        this.label = label;
    }

    /** @return the label {@code nvidia-smi topo -m} prints for this class ({@code X}, {@code NV}, {@code PIX}, ...) */
    public String label() {
        return label;
    }

    /**
     * @param other another class
     * @return true if this class is strictly nearer (fewer or cheaper hops) than {@code other}
     */
    public boolean nearerThan(PathClass other) {
        return compareTo(other) < 0; // declared nearest first
    }
}
