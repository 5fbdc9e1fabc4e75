package dev.gdsloader.cli;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaAvailability;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.cufile.CuFileDriverProperties;
import dev.gdsloader.cufile.CuFileLibrary;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.loader.PathSelector;
import dev.gdsloader.memory.MemoryUsage;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.posix.AlignedMemory;
import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code gdsloader doctor}: an environment report in the spirit of {@code gdscheck -p}.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = "Report GPU, driver, CUDA runtime, libcufile, cuFile mode and why, a pinned-memory test, "
                + "whether the GPU can register host memory (and read-only host memory) and its NUMA node, "
                + "the topology (per GPU: PCI bus id, NUMA node, copy engines; a GPU x GPU matrix of peer access, P2P attributes and "
                + "link class, NVLink from NVML else the PCI path class; each GPU's path class to the data's block device; the "
                + "AUTO device choice), whether a data directory takes O_DIRECT, which path AUTO picks there, and the native memory budget "
                + "with what is outstanding.")
final class DoctorCommand implements Callable<Integer> {
    @Option(names = {"-d", "--data"}, description = "data directory to check (default: ${DEFAULT-VALUE})", defaultValue = ".")
    Path data;

    @Override
    public Integer call() throws IOException {
        if (!Files.isDirectory(data)) {
            throw new IOException(data + ": --data must be an existing directory");
        }
        PrintStream out = System.out;
        out.println("gdsloader doctor");
        line(out, "java", Runtime.version() + " (" + System.getProperty("java.vendor") + ")");
        CudaAvailability cuda = Cuda.availability();
        if (cuda.available()) {
            line(out, "CUDA driver", CudaAvailability.format(cuda.driverVersion()) + " (runtime in JCuda: "
                    + CudaAvailability.format(cuda.runtimeVersion()) + ")");
            for (int i = 0; i < cuda.deviceCount(); i++) {
                CudaDevice d = CudaDevice.get(i);
                line(out, "GPU " + i, String.format(Locale.ROOT, "%s, %.1f GB, compute %d.%d, %d copy engines, PCI %s",
                        d.name(), d.totalMemoryBytes() / 1e9, d.computeMajor(), d.computeMinor(), d.copyEngines(), d.pciBusId()));
            }
        } else {
            line(out, "GPU", "none: " + cuda.reason());
        }
        CuFileLibrary lib = CuFileLibrary.get();
        line(out, "libcufile", lib.isPresent() ? CuFileLibrary.SONAME + " found" : lib.failure().orElseThrow());
        PathSelector.Decision auto = PathSelector.decideAuto(data.toAbsolutePath());
        CuFileStatus st = auto.cuFile();
        st.libraryVersion().ifPresent(v -> line(out, "cuFile version", v));
        line(out, "cuFile mode", st.mode() + ": " + st.reason());
        st.properties().ifPresent(p -> line(out, "cuFile driver", props(p)));
        lib.logPath().filter(p -> Files.exists(Path.of(p))).ifPresent(p -> line(out, "cuFile log", p));
        line(out, "pinned memory", cuda.available() ? pinnedTest() : "not tested: no GPU");
        if (cuda.available()) {
            for (int i = 0; i < cuda.deviceCount(); i++) {
                line(out, "host register", "GPU " + i + ": " + hostRegistration(i));
                line(out, "GPU NUMA node", "GPU " + i + ": " + numaNodeOf(i));
            }
        } else {
            line(out, "host register", "not checked: no GPU (" + cuda.reason() + ")");
            line(out, "GPU NUMA node", "not known: no GPU (" + cuda.reason() + ")");
        }
        List<String[]> topology;
        try {
            topology = cuda.available() ? TopologyReport.gather(cuda.deviceCount(), data.toAbsolutePath())
                    : TopologyReport.lines(List.of(), new TopologyReport.Pair[0][0], "",
                    dev.gdsloader.loader.topology.PciTopology.system().blockDeviceOf(data.toAbsolutePath()), data.toString());
        } catch (IOException | RuntimeException e) {
            topology = List.<String[]>of(new String[] {"topology", "not read: " + e.getMessage()});
        }
        for (String[] kv : topology) {
            line(out, kv[0], kv[1]);
        }
        line(out, "O_DIRECT", directTest(data.toAbsolutePath()));
        line(out, "AUTO path", auto.reason());
        NativeAllocator root = NativeAllocator.root();
        line(out, "memory budget", "host " + MemoryUsage.size(root.hostLimit()) + (System.getProperty(NativeAllocator.HOST_LIMIT_PROPERTY)
                == null ? " (half of this machine's " + MemoryUsage.size(NativeAllocator.hostMemoryBytes()) + "; -D"
                + NativeAllocator.HOST_LIMIT_PROPERTY + " sets it)" : " (-D" + NativeAllocator.HOST_LIMIT_PROPERTY + ")")
                + ", device " + MemoryUsage.size(root.deviceLimit()));
        line(out, "memory held", root.usage().toString());
        String held = root.describeOutstanding();
        if (!held.isEmpty()) {
            out.print(held);
        }
        return 0;
    }

    /** Where Linux lists PCI devices, each with a {@code numa_node} file. */
    static final Path PCI_DEVICES = Path.of("/sys/bus/pci/devices");

    /**
     * @param device GPU ordinal
     * @return whether it can register host memory ({@code cudaHostRegister}) and read-only host memory (a
     *     {@code PROT_READ} mapping, {@code cudaHostRegisterReadOnly}): what a zero-copy path from mapped files needs
     */
    private static String hostRegistration(int device) {
        try {
            boolean any = CudaDevice.attribute(device, CudaDevice.HOST_REGISTER_SUPPORTED) != 0;
            boolean readOnly = CudaDevice.attribute(device, CudaDevice.HOST_REGISTER_READ_ONLY_SUPPORTED) != 0;
            return "cudaHostRegister " + (any ? "supported" : "NOT supported") + ", read-only (cudaHostRegisterReadOnly) "
                    + (readOnly ? "supported" : "NOT supported") + " (cudaDevAttrHostRegisterSupported, "
                    + "cudaDevAttrHostRegisterReadOnlySupported)";
        } catch (RuntimeException e) {
            return "cannot tell: " + e.getMessage();
        }
    }

    private static String numaNodeOf(int device) {
        try {
            return numaNode(CudaDevice.get(device).pciBusId(), PCI_DEVICES);
        } catch (RuntimeException e) {
            return "cannot tell: " + e.getMessage();
        }
    }

    /**
     * The NUMA node a PCI device is attached to, from sysfs.
     *
     * @param pciBusId the bus id as {@code cudaDeviceGetPCIBusId} gives it, e.g. {@code 0000:2A:00.0} (a domain of 8
     *     hex digits is cut to its last 4, as sysfs names it)
     * @param pciDevices the directory of PCI devices ({@link #PCI_DEVICES}; a test passes its own)
     * @return one line: {@code node N (file)}, or why it is not known (no such file, -1 = no affinity reported)
     */
    static String numaNode(String pciBusId, Path pciDevices) {
        String id = pciBusId.trim().toLowerCase(Locale.ROOT);
        int colon = id.indexOf(':');
        if (colon > 4) {
            id = id.substring(colon - 4);
        }
        Path f = pciDevices.resolve(id).resolve("numa_node");
        try {
            String v = Files.readString(f).trim();
            int node = Integer.parseInt(v);
            return node < 0 ? "none reported (" + f + " is " + v + ": one node, or the platform does not say)"
                    : "node " + node + " (" + f + ")";
        } catch (IOException | NumberFormatException e) {
            return "not known: cannot read " + f + " (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")";
        }
    }

    private static String props(CuFileDriverProperties p) {
        return String.format(Locale.ROOT, "nvidia-fs %s, max direct I/O %d KiB, per-buffer cache %d KiB, max batch I/O %d",
                p.nvfsLoaded() ? p.nvfsMajor() + "." + p.nvfsMinor() : "not loaded", p.maxDirectIoBytes() / 1024,
                p.perBufferCacheBytes() / 1024, p.maxBatchIoSize());
    }

    private static String pinnedTest() {
        long bytes = 64L << 20;
        try (PinnedBuffer pinned = PinnedBuffer.allocate(bytes);
             DeviceBuffer dev = DeviceBuffer.allocate(bytes);
             CudaStream s = CudaStream.create()) {
            s.copyToDevice(dev, 0, pinned, 0, bytes);
            s.synchronize();
            long t0 = System.nanoTime();
            int reps = 8;
            for (int i = 0; i < reps; i++) {
                s.copyToDevice(dev, 0, pinned, 0, bytes);
            }
            s.synchronize();
            double gbps = reps * bytes / (double) (System.nanoTime() - t0);
            return String.format(Locale.ROOT, "OK: cudaHostAlloc of 64 MiB; pinned host-to-device copy %.1f GB/s", gbps);
        } catch (RuntimeException e) {
            return "FAILED: " + e.getMessage();
        }
    }

    private static String directTest(Path dir) {
        Path f = null;
        try {
            f = Files.createTempFile(dir, ".gdsloader-odirect-", ".bin");
            Files.write(f, new byte[PosixFile.DIRECT_ALIGNMENT]);
            try (PosixFile pf = PosixFile.openForRead(f, true); AlignedMemory m = new AlignedMemory(PosixFile.DIRECT_ALIGNMENT)) {
                long n = pf.read(m.segment(), 0);
                return dir + ": " + (pf.isDirect() ? "yes (4 KiB O_DIRECT pread returned " + n + " bytes)" : "no, " + pf.openMode());
            }
        } catch (IOException e) {
            return dir + ": cannot test: " + e.getMessage();
        } finally {
            if (f != null) {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException ignored) {
                    // a leftover 4 KiB probe file is harmless
                }
            }
        }
    }

    private static void line(PrintStream out, String key, String value) {
        out.printf(Locale.ROOT, "  %-15s %s%n", key, value);
    }
}
