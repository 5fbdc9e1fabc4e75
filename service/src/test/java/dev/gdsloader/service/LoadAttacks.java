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
     * Waits until at least {@code atLeast} of the {@code idle} sockets were told {@code message} (the server's refusal,
     * in its GOAWAY), reading what each has received without blocking; the admitted ones got the server's SETTINGS
     * only.
     *
     * @return how many were refused
     * @throws AssertionError if fewer were within {@link Await#HANG}
     */
    public static int awaitRefused(List<Socket> idle, String message, int atLeast) {
        java.util.Map<Socket, java.io.ByteArrayOutputStream> got = new java.util.HashMap<>();
        int[] refused = new int[1];
        Await.until(() -> refused[0] + " of " + idle.size() + " idle connections refused, " + atLeast + " expected", () -> {
            refused[0] = 0;
            for (Socket s : idle) {
                java.io.ByteArrayOutputStream b = got.computeIfAbsent(s, k -> new java.io.ByteArrayOutputStream());
                try {
                    int n = s.getInputStream().available();
                    if (n > 0) {
                        b.write(s.getInputStream().readNBytes(n));
                    }
                } catch (IOException closed) {
                    // reset by the server: what it said before is kept
                }
                if (b.toString(StandardCharsets.ISO_8859_1).contains(message)) {
                    refused[0]++;
                }
            }
            return refused[0] >= atLeast;
        });
        return refused[0];
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
