package dev.gdsloader.cli;

import dev.gdsloader.bench.PeerCopyBench;
import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaAvailability;
import dev.gdsloader.cuda.CudaDevice;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code gdsloader p2p}: GPU-to-GPU copies measured every way at once ({@link PeerCopyBench}).
 */
@Command(name = "p2p", mixinStandardHelpOptions = true,
        description = "Measure moving bytes from one GPU to another for each transfer size: host-staged (device -> pinned "
                + "-> device), cudaMemcpyPeerAsync with peer access off and on, a copy kernel writing into the peer's memory, "
                + "and the pinned host-to-device ceiling beside them; every way checked byte-exact. Writes p2p.json and "
                + "p2p.png to --out. Needs two GPUs, or --same-device for the degenerate one-GPU comparison. "
                + "Exit 1 if a way was not byte-exact.")
final class P2pCommand implements Callable<Integer> {
    @Option(names = "--src", defaultValue = "0", description = "source GPU (default: ${DEFAULT-VALUE})")
    int src;

    @Option(names = "--dst", defaultValue = "1", description = "destination GPU (default: ${DEFAULT-VALUE}; ignored with --same-device)")
    int dst;

    @Option(names = "--sizes", split = ",", converter = ByteSize.class,
            defaultValue = "1MiB,4MiB,16MiB,64MiB,256MiB,1GiB",
            description = "transfer sizes, multiples of 16 bytes (default: ${DEFAULT-VALUE})")
    List<Long> sizes;

    @Option(names = "--same-device", description = "source and destination are --src: the degenerate comparison on one GPU "
            + "(the peer ways become device-to-device copies), to try the command where only one GPU is visible")
    boolean sameDevice;

    @Option(names = "--out", defaultValue = "p2p-report", description = "directory for p2p.json and p2p.png (default: ${DEFAULT-VALUE})")
    Path out;

    @Override
    public Integer call() throws Exception {
        try {
            PeerCopyBench.checkSizes(sizes);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--sizes: " + e.getMessage(), e);
        }
        Checks.usableOutputDir("--out", out);
        if (src < 0 || (!sameDevice && dst < 0)) {
            throw new IllegalArgumentException((src < 0 ? "--src " + src : "--dst " + dst)
                    + ": a GPU ordinal is 0 or more (nvidia-smi -L lists them)");
        }
        CudaAvailability cuda = Cuda.availability();
        int destination = sameDevice ? src : dst;
        if (!cuda.available()) {
            throw new IllegalArgumentException((sameDevice
                    ? "--same-device needs a GPU, found none: it copies within GPU " + src + "'s memory"
                    : "needs two GPUs, found none: it copies from GPU " + src + "'s memory to GPU " + dst + "'s (--same-device: "
                            + "within one GPU)") + "; CUDA is not available: " + cuda.reason());
        }
        int n = cuda.deviceCount();
        if (!sameDevice && src == dst) {
            throw new IllegalArgumentException("--src and --dst are both GPU " + src + ": use --same-device for one GPU");
        }
        if (!sameDevice && n < 2) {
            throw new IllegalArgumentException("needs two GPUs, found " + n + " (GPU 0: " + CudaDevice.get(0).name()
                    + "); --same-device runs the degenerate GPU 0 -> GPU 0 comparison");
        }
        for (int g : new int[] {src, destination}) {
            if (g < 0 || g >= n) {
                throw new IllegalArgumentException("GPU " + g + " does not exist: " + n + " GPU(s) visible (0.." + (n - 1) + ")");
            }
        }
        PeerCopyBench.Report r = PeerCopyBench.run(src, destination, sizes, System.out);
        System.out.println("source      " + r.srcDevice());
        System.out.println("destination " + r.dstDevice());
        System.out.println("peer access " + (r.canAccessPeer() ? "cudaDeviceCanAccessPeer both ways" : "no") + (r.note().isEmpty()
                ? "" : "; " + r.note()));
        System.out.println(table(r));
        for (Path p : PeerCopyBench.write(r, "gdsloader p2p --src " + src + " --dst " + destination + (sameDevice ? " --same-device" : "")
                + " --sizes " + String.join(",", sizes.stream().map(String::valueOf).toList()), out)) {
            System.out.println("wrote " + p);
        }
        if (!r.allExact()) {
            System.out.println("p2p: a way was NOT byte-exact (see the table)");
            return 1;
        }
        return 0;
    }

    /** @return GB/s by size (rows) and way (columns), "-" where a way was not measured, "!" after a row not byte-exact */
    static String table(PeerCopyBench.Report r) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-10s", "size"));
        for (PeerCopyBench.Way w : PeerCopyBench.Way.values()) {
            sb.append(String.format(Locale.ROOT, "%18s", w));
        }
        List<Long> sizes = r.rows().stream().map(PeerCopyBench.Row::bytes).distinct().toList();
        for (long s : sizes) {
            sb.append('\n').append(String.format(Locale.ROOT, "%-10s", ByteSize.format(s)));
            for (PeerCopyBench.Way w : PeerCopyBench.Way.values()) {
                String cell = r.rows().stream().filter(x -> x.bytes() == s && x.way() == w).findFirst()
                        .map(x -> String.format(Locale.ROOT, "%.2f%s", x.gbps(), x.exact() ? "" : "!")).orElse("-");
                sb.append(String.format(Locale.ROOT, "%18s", cell));
            }
        }
        return sb.append("\n(GB/s = 1e9 bytes/s)").toString();
    }
}
