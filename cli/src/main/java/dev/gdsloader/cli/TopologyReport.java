package dev.gdsloader.cli;

import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaPeers;
import dev.gdsloader.cuda.NvLinks;
import dev.gdsloader.loader.topology.DevicePlacement;
import dev.gdsloader.loader.topology.PathClass;
import dev.gdsloader.loader.topology.PciTopology;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The topology part of {@code gdsloader doctor}: per GPU its PCI bus id, NUMA node, copy engines and place in the PCI
 * tree; the GPU x GPU matrix of peer access and P2P attributes with each pair's link class (NVLink from NVML, else the
 * PCI path class from sysfs, as {@code nvidia-smi topo -m} names them); each GPU's path class to the block device
 * holding the data; and the {@code AUTO} device choice ({@link DevicePlacement}). {@link #gather} asks CUDA, NVML and
 * sysfs; {@link #lines} only formats, so CI tests it on fake topologies.
 */
final class TopologyReport {
    private TopologyReport() {
    }

    /**
     * One GPU.
     *
     * @param ordinal CUDA ordinal
     * @param busId PCI bus id as CUDA gives it
     * @param copyEngines {@code cudaDevAttrAsyncEngineCount}
     * @param location its place in sysfs; empty where sysfs does not list it
     */
    record Gpu(int ordinal, String busId, int copyEngines, Optional<PciTopology.PciLocation> location) {
    }

    /**
     * One ordered pair of GPUs.
     *
     * @param canAccessPeer {@code cudaDeviceCanAccessPeer(from, to)}
     * @param performanceRank {@code cudaDevP2PAttrPerformanceRank}
     * @param nativeAtomics {@code cudaDevP2PAttrNativeAtomicSupported}
     * @param accessSupported {@code cudaDevP2PAttrAccessSupported}
     * @param nvlinks active NVLinks between them (NVML), 0 where none or unknown
     * @param pciClass the PCI path class from sysfs; empty where a GPU is not in sysfs
     * @param error what failed, where a CUDA query did (then the other fields are not meaningful)
     */
    record Pair(boolean canAccessPeer, int performanceRank, boolean nativeAtomics, boolean accessSupported, int nvlinks,
                Optional<PathClass> pciClass, Optional<String> error) {
        /** @return the link class as {@code nvidia-smi topo -m} prints it: {@code NV#} for NVLink, else the PCI class */
        String linkClass() {
            return nvlinks > 0 ? "NV" + nvlinks : pciClass.map(PathClass::label).orElse("?");
        }
    }

    /**
     * @param gpus the visible GPUs, by ordinal
     * @param pairs {@code pairs[i][j]} for GPU i to GPU j, i != j (the diagonal is not read)
     * @param nvmlNote what NVML said where it did not answer for every GPU (empty if it did)
     * @param data the block device holding the data, if any
     * @param dataName the data directory as given
     * @return the report's lines, each "key value" as doctor prints them (key first, then the value)
     */
    static List<String[]> lines(List<Gpu> gpus, Pair[][] pairs, String nvmlNote, Optional<PciTopology.BlockDevice> data,
                                String dataName) {
        List<String[]> out = new ArrayList<>();
        for (Gpu g : gpus) {
            out.add(row("topology", String.format(Locale.ROOT, "GPU %d: PCI %s, NUMA node %s, %d copy engines, at %s",
                    g.ordinal(), g.busId(), g.location().map(l -> l.numaNode() < 0 ? "not reported" : String.valueOf(l.numaNode()))
                            .orElse("not known"), g.copyEngines(),
                    g.location().map(l -> String.join("/", l.chain())).orElse("(not in sysfs)"))));
        }
        if (gpus.isEmpty()) {
            out.add(row("topology", "no GPU: no peer matrix"));
        } else if (gpus.size() < 2) {
            out.add(row("peer matrix", "one GPU: peer access and peer copies need two (cudaDeviceCanAccessPeer is false "
                    + "for a device and itself)"));
        } else {
            out.add(row("peer matrix", "row = from GPU, column = to GPU: link class (NV# = NVLinks from NVML, else the "
                    + "PCI path class from sysfs), cudaDeviceCanAccessPeer, P2P attributes: performance rank, native atomics, "
                    + "access supported"));
            StringBuilder head = new StringBuilder();
            for (Gpu g : gpus) {
                head.append(String.format(Locale.ROOT, "%-34s", "to GPU " + g.ordinal()));
            }
            out.add(row("", head.toString().stripTrailing()));
            for (int i = 0; i < gpus.size(); i++) {
                StringBuilder r = new StringBuilder();
                for (int j = 0; j < gpus.size(); j++) {
                    r.append(String.format(Locale.ROOT, "%-34s", i == j ? "X" : cell(pairs[i][j])));
                }
                out.add(row("GPU " + gpus.get(i).ordinal(), r.toString().stripTrailing()));
            }
        }
        if (!gpus.isEmpty()) {
            out.add(row("NVLink", nvmlNote.isEmpty() ? "NVML answered for every GPU" : nvmlNote));
        }
        if (data.isEmpty()) {
            out.add(row("data device", dataName + ": not on a block device listed in sysfs (tmpfs or overlay?)"));
        } else {
            PciTopology.BlockDevice d = data.get();
            out.add(row("data device", dataName + ": " + d.name() + (d.pci().isEmpty() ? " (no PCI device behind it)"
                    : ", PCI " + String.join(", ", d.pci().stream().map(PciTopology.PciLocation::describe).toList()))));
            if (!d.pci().isEmpty()) {
                for (Gpu g : gpus) {
                    out.add(row("GPU to data", "GPU " + g.ordinal() + " -> " + d.name() + ": "
                            + g.location().map(l -> DevicePlacement.classTo(l, d).label()).orElse("? (GPU not in sysfs)")));
                }
            }
        }
        if (!gpus.isEmpty()) {
            DevicePlacement.Choice c = DevicePlacement.nearest(gpus.stream()
                    .map(g -> new DevicePlacement.Gpu(g.ordinal(), g.location())).toList(), data, dataName);
            out.add(row("AUTO device", c.reason()));
        }
        return out;
    }

    private static String cell(Pair p) {
        if (p.error().isPresent()) {
            return p.linkClass() + " error: " + p.error().get();
        }
        return p.linkClass() + " peer " + (p.canAccessPeer() ? "yes" : "no") + " rank " + p.performanceRank() + " atom "
                + (p.nativeAtomics() ? "yes" : "no") + " access " + (p.accessSupported() ? "yes" : "no");
    }

    private static String[] row(String key, String value) {
        return new String[] {key, value};
    }

    /**
     * Asks CUDA (device count, bus ids, copy engines, peer access, P2P attributes), NVML (NVLinks) and sysfs.
     *
     * @param deviceCount visible GPUs, &ge; 1
     * @param data the data directory
     * @return the report's lines ({@link #lines})
     * @throws IOException if the data directory's attributes cannot be read
     */
    static List<String[]> gather(int deviceCount, Path data) throws IOException {
        PciTopology sys = PciTopology.system();
        List<Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < deviceCount; i++) {
            CudaDevice d = CudaDevice.get(i);
            Optional<PciTopology.PciLocation> at;
            try {
                at = sys.locate(d.pciBusId());
            } catch (IllegalArgumentException e) {
                at = Optional.empty();
            }
            gpus.add(new Gpu(i, d.pciBusId(), d.copyEngines(), at));
        }
        NvLinks.Result nv = NvLinks.query(gpus.stream().map(Gpu::busId).toList());
        Pair[][] pairs = new Pair[deviceCount][deviceCount];
        for (int i = 0; i < deviceCount; i++) {
            for (int j = 0; j < deviceCount; j++) {
                if (i == j) {
                    continue;
                }
                Gpu a = gpus.get(i);
                Gpu b = gpus.get(j);
                Optional<PathClass> pci = a.location().isPresent() && b.location().isPresent()
                        ? Optional.of(PciTopology.pathClass(a.location().get(), b.location().get())) : Optional.empty();
                int links = nv.linksBetween(a.busId(), b.busId());
                try {
                    pairs[i][j] = new Pair(CudaPeers.canAccessPeer(i, j), CudaPeers.attribute(CudaPeers.PERFORMANCE_RANK, i, j),
                            CudaPeers.attribute(CudaPeers.NATIVE_ATOMIC_SUPPORTED, i, j) != 0,
                            CudaPeers.attribute(CudaPeers.ACCESS_SUPPORTED, i, j) != 0, links, pci, Optional.empty());
                } catch (RuntimeException e) {
                    pairs[i][j] = new Pair(false, 0, false, false, links, pci, Optional.of(e.getMessage()));
                }
            }
        }
        return lines(gpus, pairs, nv.note(), sys.blockDeviceOf(data), data.toString());
    }
}
