package dev.gdsloader.cuda;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.bytedeco.cuda.global.nvml;
import org.bytedeco.cuda.nvml.nvmlDevice_st;
import org.bytedeco.cuda.nvml.nvmlPciInfo_t;
import org.bytedeco.javacpp.PointerPointer;

/**
 * NVLink between GPUs, from NVML ({@code libnvidia-ml.so.1}, the driver's library) through the bytedeco CUDA
 * binding's NVML module: for each GPU, its active links ({@code nvmlDeviceGetNvLinkState}) and the PCI device at the
 * other end of each ({@code nvmlDeviceGetNvLinkRemotePciInfo_v2}), what {@code nvidia-smi topo -m} shows as
 * {@code NV#}. Only functions every driver since 418 exports are called (a function the installed library lacks would
 * end the JVM: the binding binds lazily).
 *
 * <p>Stateless; each call initialises NVML and shuts it down again. Thread-safe as NVML is.
 */
public final class NvLinks {
    private NvLinks() {
    }

    /**
     * What NVML said.
     *
     * @param links for each GPU bus id asked about (as given), the remote PCI bus ids of its active links, each once
     *     per link (lower case, NVML's 8-digit domain cut to 4)
     * @param note empty if NVML answered for every GPU, else why not (NVML missing, a GPU it does not know, NVLink
     *     not supported on a GPU: then that GPU has no entry)
     */
    public record Result(Map<String, List<String>> links, String note) {
        /** Copies the map. */
        public Result {
            links = Map.copyOf(links);
        }

        /**
         * @param a a GPU's bus id as asked
         * @param bBusId another PCI device's bus id in any case, with a 4- or 8-digit domain
         * @return active links from {@code a} straight to it; where there are none, {@code a}'s links to the NVSwitches
         *     (remote devices that are no GPU asked about) that {@code b} links to as well; 0 where NVML said nothing
         */
        public int linksBetween(String a, String bBusId) {
            String b = normalise(bBusId);
            List<String> fromA = links.getOrDefault(a, List.of());
            int direct = (int) fromA.stream().filter(b::equals).count();
            if (direct > 0) {
                return direct;
            }
            // through NVSwitches (HGX): a's links to devices that are not GPUs asked about and that b links to as well,
            // counted as nvidia-smi topo -m counts them (NV18 for every pair of H100/H200 SXM GPUs)
            java.util.Set<String> gpus = new java.util.HashSet<>();
            List<String> fromB = List.of();
            for (Map.Entry<String, List<String>> e : links.entrySet()) {
                gpus.add(normalise(e.getKey()));
                if (normalise(e.getKey()).equals(b)) {
                    fromB = e.getValue();
                }
            }
            java.util.Set<String> reachedByB = new java.util.HashSet<>(fromB);
            return (int) fromA.stream().filter(r -> !gpus.contains(r) && reachedByB.contains(r)).count();
        }
    }

    /**
     * @param busIds the GPUs' PCI bus ids as CUDA gives them ({@code cudaDeviceGetPCIBusId})
     * @return their active NVLinks; never throws: where NVML cannot be loaded or initialised, an empty map and why
     */
    public static Result query(List<String> busIds) {
        try {
            return queryNvml(busIds);
        } catch (LinkageError | RuntimeException e) {
            return new Result(Map.of(), "NVML (libnvidia-ml.so.1 through org.bytedeco:cuda) cannot be used here: "
                    + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private static Result queryNvml(List<String> busIds) {
        int rc = nvml.nvmlInit_v2();
        if (rc != nvml.NVML_SUCCESS) {
            return new Result(Map.of(), "nvmlInit_v2 failed: " + error(rc));
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        StringBuilder note = new StringBuilder();
        try {
            for (String bus : busIds) {
                try (PointerPointer<nvmlDevice_st> handle = new PointerPointer<>(1)) {
                    rc = nvml.nvmlDeviceGetHandleByPciBusId_v2(bus, handle);
                    if (rc != nvml.NVML_SUCCESS) {
                        note.append(note.isEmpty() ? "" : "; ").append("nvmlDeviceGetHandleByPciBusId_v2(").append(bus)
                                .append("): ").append(error(rc));
                        continue;
                    }
                    nvmlDevice_st dev = new nvmlDevice_st(handle.get(0));
                    java.util.ArrayList<String> remote = new java.util.ArrayList<>();
                    String unsupported = null;
                    for (int link = 0; link < nvml.NVML_NVLINK_MAX_LINKS; link++) {
                        int[] active = {0};
                        rc = nvml.nvmlDeviceGetNvLinkState(dev, link, active);
                        if (rc != nvml.NVML_SUCCESS) {
                            if (link == 0) {
                                unsupported = error(rc); // no NVLink on this GPU (NVML_ERROR_NOT_SUPPORTED)
                            }
                            break; // past the GPU's last link
                        }
                        if (active[0] != nvml.NVML_FEATURE_ENABLED) {
                            continue;
                        }
                        try (nvmlPciInfo_t pci = new nvmlPciInfo_t()) {
                            if (nvml.nvmlDeviceGetNvLinkRemotePciInfo_v2(dev, link, pci) == nvml.NVML_SUCCESS) {
                                remote.add(normalise(pci.busId().getString()));
                            }
                        }
                    }
                    if (unsupported != null) {
                        note.append(note.isEmpty() ? "" : "; ").append(bus).append(": no NVLink (").append(unsupported).append(')');
                    }
                    out.put(bus, List.copyOf(remote));
                }
            }
        } finally {
            nvml.nvmlShutdown();
        }
        return new Result(out, note.toString());
    }

    private static String error(int rc) {
        try {
            return nvml.nvmlErrorString(rc).getString() + " (" + rc + ")";
        } catch (RuntimeException | LinkageError e) {
            return "NVML error " + rc;
        }
    }

    /** Lower case, a 4-digit domain: how sysfs and CUDA's 4-digit form name a PCI device. */
    static String normalise(String busId) {
        String id = busId.trim().toLowerCase(Locale.ROOT);
        int colon = id.indexOf(':');
        return colon > 4 ? id.substring(colon - 4) : id;
    }
}
