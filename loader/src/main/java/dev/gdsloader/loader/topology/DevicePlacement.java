package dev.gdsloader.loader.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code AUTO} device choice: of the visible GPUs, the one nearest the block device holding the data, by
 * {@link PathClass} (a GPU under the drive's PCIe switch before one through the host bridge, before one on another
 * NUMA node), ties to the lowest ordinal. Pure logic over located devices: {@link PciTopology} finds them, tests give
 * their own.
 */
public final class DevicePlacement {
    private DevicePlacement() {
    }

    /**
     * One visible GPU.
     *
     * @param ordinal its CUDA ordinal
     * @param location where it sits; empty where sysfs does not list its bus id
     */
    public record Gpu(int ordinal, Optional<PciTopology.PciLocation> location) {
    }

    /**
     * The choice and why.
     *
     * @param ordinal the chosen GPU's CUDA ordinal
     * @param pathClass its class to the data's block device; empty where no class could be told
     * @param reason one line: the choice, the block device and every GPU's class to it
     */
    public record Choice(int ordinal, Optional<PathClass> pathClass, String reason) {
    }

    /**
     * @param gpus the visible GPUs, at least one
     * @param data the block device holding the data, if any (empty: tmpfs, overlay, or not in sysfs)
     * @param dataName how to name the data in the reason (e.g. its directory)
     * @return the nearest GPU and why; the lowest ordinal, saying why, where the data's device or the GPUs cannot be
     *     placed
     * @throws IllegalArgumentException if {@code gpus} is empty
     */
    public static Choice nearest(List<Gpu> gpus, Optional<PciTopology.BlockDevice> data, String dataName) {
        if (gpus.isEmpty()) {
            throw new IllegalArgumentException("device placement needs at least one GPU, got none");
        }
        int first = gpus.stream().mapToInt(Gpu::ordinal).min().orElseThrow();
        if (data.isEmpty()) {
            return new Choice(first, Optional.empty(), "GPU " + first + ": " + dataName
                    + " is not on a block device listed in sysfs (tmpfs or overlay?), so no GPU is nearer");
        }
        PciTopology.BlockDevice dev = data.get();
        if (dev.pci().isEmpty()) {
            return new Choice(first, Optional.empty(), "GPU " + first + ": " + dataName + " is on " + dev.name()
                    + ", which has no PCI device in sysfs, so no GPU is nearer");
        }
        Gpu best = null;
        PathClass bestClass = null;
        List<String> all = new ArrayList<>();
        for (Gpu g : gpus) {
            Optional<PathClass> c = g.location().map(l -> classTo(l, dev));
            all.add("GPU " + g.ordinal() + " " + c.map(PathClass::label).orElse("not in sysfs"));
            if (c.isPresent() && (bestClass == null || c.get().nearerThan(bestClass)
                    || (c.get() == bestClass && g.ordinal() < best.ordinal()))) {
                best = g;
                bestClass = c.get();
            }
        }
        String devName = dev.name() + " (" + String.join(", ", dev.pci().stream().map(PciTopology.PciLocation::busId).toList()) + ")";
        if (best == null) {
            return new Choice(first, Optional.empty(), "GPU " + first + ": no GPU's bus id is in sysfs, so none is known "
                    + "to be nearer " + devName + " holding " + dataName);
        }
        return new Choice(best.ordinal(), Optional.of(bestClass), "GPU " + best.ordinal() + ": nearest " + devName
                + " holding " + dataName + " (" + bestClass.label() + "; " + String.join(", ", all) + ")");
    }

    /**
     * @param gpu a GPU's location
     * @param dev a block device
     * @return the nearest class between the GPU and any PCI device behind the block device
     */
    public static PathClass classTo(PciTopology.PciLocation gpu, PciTopology.BlockDevice dev) {
        PathClass best = PathClass.SYS;
        for (PciTopology.PciLocation p : dev.pci()) {
            PathClass c = PciTopology.pathClass(gpu, p);
            if (c.nearerThan(best)) {
                best = c;
            }
        }
        return best;
    }
}
