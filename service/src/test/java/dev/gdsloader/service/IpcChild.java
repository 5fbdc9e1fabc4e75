package dev.gdsloader.service;

import dev.gdsloader.loader.path.ReadPath;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The client half of {@link ServiceIpcGpuTest}, run in a child JVM: CUDA cannot open an IPC handle in the
 * process that created it ({@code cudaIpcOpenMemHandle}, CUDA Runtime API), so the server (test JVM) and this
 * client must be two processes. Opens a CUDA_IPC session, downloads every column of every batch from the mapped
 * GPU memory and prints, per batch, {@code B epoch index rec,rec,...} and per column {@code C name bytes crc32};
 * {@code DONE delivery} at the end.
 */
final class IpcChild {
    private IpcChild() {
    }

    /**
     * @param args host, port, dataset, batch size, read path, epochs
     * @throws Exception on any failure (exit status 1, the trace on stderr)
     */
    public static void main(String[] args) throws Exception {
        try (PrefetchClient c = PrefetchClient.builder(args[0], Integer.parseInt(args[1])).dataset(args[2])
                .batchSize(Integer.parseInt(args[3])).path(ReadPath.valueOf(args[4])).delivery(Delivery.CUDA_IPC)
                .prefetchDepth(3).timeout(Duration.ofSeconds(60)).open()) {
            int epochs = Integer.parseInt(args[5]);
            for (int e = 0; e < epochs; e++) {
                for (RemoteBatch b : c) {
                    try (b) {
                        System.out.println("B " + b.epoch() + " " + b.index() + " "
                                + Arrays.stream(b.recordIndices()).mapToObj(Long::toString).collect(Collectors.joining(",")));
                        for (RemoteColumn col : b.columns()) {
                            if (!col.onDevice() || col.devicePointer() == 0) {
                                throw new IllegalStateException(col + " is not a device mapping");
                            }
                            System.out.println("C " + col.name() + " " + col.bytes() + " " + ServiceShards.crc(col.toByteArray()));
                        }
                    }
                }
            }
            System.out.println("DONE " + c.delivery() + " " + c.pathTaken());
        }
    }
}
