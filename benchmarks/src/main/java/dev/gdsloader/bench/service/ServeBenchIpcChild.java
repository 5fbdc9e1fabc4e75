package dev.gdsloader.bench.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.client.RemoteColumn;
import dev.gdsloader.service.protocol.Delivery;
import java.time.Duration;
import java.util.Iterator;

/**
 * The CUDA IPC client of {@code serve-bench}, run by it in a child JVM (CUDA cannot open an IPC handle in the process
 * that created it): opens a {@link Delivery#CUDA_IPC} {@link PrefetchClient} with the given loader options, reads one
 * warm-up epoch, then the measured epochs, releasing each batch after its consumer stream ({@code release(stream)},
 * as a training loop would; nothing is copied off the GPU), and prints one line
 * {@code SERVE_BENCH_IPC {"bytes": B, "records": R, "seconds": S, "pathTaken": "..."}} (bytes of dataset columns,
 * records without padding, seconds of the measured epochs). Any failure: a stack trace on stderr, exit status 1.
 */
final class ServeBenchIpcChild {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ServeBenchIpcChild() {
    }

    /**
     * @param args host, port, dataset name, loader options JSON ({@link LoaderOptions#toJson()}: its device is the GPU
     *     used), measured epochs, timeout in seconds (per wait)
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            throw new IllegalArgumentException("usage: ServeBenchIpcChild HOST PORT DATASET OPTIONS_JSON EPOCHS TIMEOUT_S");
        }
        LoaderOptions options = LoaderOptions.fromJson(args[3]);
        int epochs = Integer.parseInt(args[4]);
        CudaDevice.makeCurrent(options.device());
        try (PrefetchClient c = PrefetchClient.builder(args[0], Integer.parseInt(args[1])).dataset(args[2]).options(options)
                .delivery(Delivery.CUDA_IPC).device(options.device()).timeout(Duration.ofSeconds(Long.parseLong(args[5]))).open();
             CudaStream stream = CudaStream.create()) {
            long[] sums = new long[2];
            epoch(c, stream, sums); // warm-up
            sums = new long[2];
            long t0 = System.nanoTime();
            for (int e = 0; e < epochs; e++) {
                epoch(c, stream, sums);
            }
            stream.synchronize();
            long nanos = System.nanoTime() - t0;
            ObjectNode r = JSON.createObjectNode();
            r.put("bytes", sums[0]);
            r.put("records", sums[1]);
            r.put("seconds", nanos / 1e9);
            r.put("pathTaken", c.pathTaken());
            System.out.println(ServeBench.IPC_RESULT + r);
        }
        System.exit(0); // nothing else to wait for
    }

    private static void epoch(PrefetchClient c, CudaStream stream, long[] sums) {
        Iterator<RemoteBatch> it = c.iterator();
        while (it.hasNext()) {
            RemoteBatch b = it.next();
            for (RemoteColumn col : b.columns()) {
                sums[0] += col.bytes();
            }
            sums[1] += b.records() - b.paddingCount();
            b.release(stream);
        }
    }
}
