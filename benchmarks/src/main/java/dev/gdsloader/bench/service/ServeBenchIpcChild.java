package dev.gdsloader.bench.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.service.Delivery;
import dev.gdsloader.service.IpcTrace;
import dev.gdsloader.service.PrefetchClient;
import dev.gdsloader.service.RemoteBatch;
import dev.gdsloader.service.RemoteColumn;
import java.time.Duration;
import java.util.Iterator;

/**
 * The CUDA IPC client of {@code serve-bench}, run by it in a child JVM (CUDA cannot open an IPC handle in the process
 * that created it): opens a {@link Delivery#CUDA_IPC} {@link PrefetchClient} with the given loader options, reads one
 * warm-up epoch, then the measured epochs, releasing each batch after its consumer stream ({@code release(stream)},
 * as a training loop would; nothing is copied off the GPU), and prints one line
 * {@code SERVE_BENCH_IPC {"bytes": B, "records": R, "seconds": S, "pathTaken": "..."}} (bytes of dataset columns,
 * records without padding, seconds of the measured epochs). With {@code -Dgdsloader.ipcTrace=true} ({@link IpcTrace})
 * the line also has {@code "trace": [...]}: the client's per-batch stages ({@link PrefetchClient#ipcTrace()}) and this
 * loop's ({@code iterator.next}: hasNext + next; {@code release(stream)}) over the measured epochs, one summary line
 * each. Any failure: a stack trace on stderr, exit status 1.
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
            IpcTrace loop = IpcTrace.create("child loop", "iterator.next", "release(stream)");
            long[] sums = new long[2];
            epoch(c, stream, sums, loop); // warm-up
            sums = new long[2];
            c.ipcTrace().reset();
            loop.reset();
            long t0 = System.nanoTime();
            for (int e = 0; e < epochs; e++) {
                epoch(c, stream, sums, loop);
            }
            stream.synchronize();
            long nanos = System.nanoTime() - t0;
            ObjectNode r = JSON.createObjectNode();
            r.put("bytes", sums[0]);
            r.put("records", sums[1]);
            r.put("seconds", nanos / 1e9);
            r.put("pathTaken", c.pathTaken());
            if (loop.on()) {
                ArrayNode trace = r.putArray("trace");
                c.ipcTrace().summary(nanos).forEach(l -> trace.add("measured epochs: " + l));
                loop.summary(nanos).forEach(l -> trace.add("measured epochs: " + l));
            }
            System.out.println(ServeBench.IPC_RESULT + r);
        }
        System.exit(0); // nothing else to wait for
    }

    private static void epoch(PrefetchClient c, CudaStream stream, long[] sums, IpcTrace trace) {
        Iterator<RemoteBatch> it = c.iterator();
        while (true) {
            long t = trace.start();
            if (!it.hasNext()) {
                break;
            }
            RemoteBatch b = it.next();
            trace.stop(0, t);
            for (RemoteColumn col : b.columns()) {
                sums[0] += col.bytes();
            }
            sums[1] += b.records() - b.paddingCount();
            t = trace.start();
            b.release(stream);
            trace.stop(1, t);
        }
    }
}
