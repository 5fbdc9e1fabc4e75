package dev.gdsloader.service;

import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.RemoteBatch;
import java.io.IOException;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;

import static org.junit.jupiter.api.Assertions.assertEquals;


/**
 * What {@link LimitsTest} (in-process server) and {@link ServerRssTest} (server in a child JVM) share: the datasets the
 * attacks read, the well-behaved client beside the attacker and its 1 s latency check, the ticket of a stream an
 * attacker opens and does not read on.
 */
public final class LoadAttacks {
    /** Records of the {@code wide} dataset, 1 MiB (uint8) each. */
    public static final int WIDE_RECORDS = 40;

    private LoadAttacks() {
    }

    /**
     * Writes {@code train} ({@link ServiceTestBase#SHARDS}) and {@code wide} ({@link #WIDE_RECORDS} records of 1 MiB,
     * one {@code .npy} shard) under {@code root}.
     *
     * @throws IOException if they cannot be written
     */
    public static void writeDatasets(Path root) throws IOException {
        ServiceShards.write(root.resolve("train"), ServiceTestBase.SHARDS);
        Files.createDirectories(root.resolve("wide"));
        dev.gdsloader.formats.npy.NpyWriter.write(root.resolve("wide").resolve("x-00000.npy"), DType.UINT8,
                new long[] {WIDE_RECORDS, 1 << 20}, new byte[WIDE_RECORDS << 20]);
    }

    /** @return a builder of the client beside the attacker: {@code train}, 8 records a batch, HOST, 30 s timeout */
    public static PrefetchClient.Builder bystander(int port) {
        return PrefetchClient.builder("127.0.0.1", port).dataset("train").batchSize(8).prefetchDepth(2).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30));
    }

    /**
     * Reads one epoch, checking it has every record. Each wait for a batch has the bystander's own deadline (its
     * 30 s timeout, against hangs): an attacker that starved it would fail it with TIMED_OUT.
     */
    public static void readEpoch(PrefetchClient c) {
        long records = 0;
        for (RemoteBatch b : c) {
            try (b) {
                records += b.records() - b.paddingCount();
            }
        }
        assertEquals(ServiceTestBase.RECORDS, records);
    }

    /**
     * Waits until the server has closed every one of {@code sockets} (an end of stream or a reset), reading and
     * dropping what each received (an admitted connection's SETTINGS) without blocking for more than 1 ms a socket.
     *
     * @throws AssertionError if some are still open after {@link Await#HANG}
     */
    public static void awaitClosedByServer(List<Socket> sockets) {
        boolean[] closed = new boolean[sockets.size()];
        int[] count = new int[1];
        byte[] drop = new byte[4096];
        Await.until(() -> count[0] + " of " + sockets.size() + " connections closed by the server", () -> {
            for (int i = 0; i < closed.length; i++) {
                if (closed[i]) {
                    continue;
                }
                try {
                    Socket s = sockets.get(i);
                    s.setSoTimeout(1);
                    while (s.getInputStream().read(drop) >= 0) {
                        // what the server sent before it closed: dropped
                    }
                    closed[i] = true;
                } catch (java.net.SocketTimeoutException open) {
                    // still open
                } catch (IOException reset) {
                    closed[i] = true; // closed by a reset: closed all the same
                }
            }
            count[0] = 0;
            for (boolean c : closed) {
                count[0] += c ? 1 : 0;
            }
            return count[0] == closed.length;
        });
    }

    /** @return the ticket of a {@code wide} stream, 1 record (1 MiB) a batch, prefetch depth 1, HOST */
    public static Ticket wideTicket() {
        return new Ticket("{\"version\":4,\"dataset\":\"wide\",\"options\":{\"batchSize\":1,\"prefetchDepth\":1,\"path\":\"HOST\"}}"
                .getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Cancels and closes an attacker's streams, then closes its clients.
     *
     * @throws Exception if a stream or client fails to close
     */
    public static void cancelAndClose(List<FlightStream> streams, List<FlightClient> clients) throws Exception {
        for (FlightStream s : streams) {
            s.cancel("done", null);
            s.close();
        }
        for (FlightClient c : clients) {
            c.close();
        }
    }
}
