package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.List;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;

/**
 * What {@link LimitsTest} (in-process server) and {@link ServerRssTest} (server in a child JVM) share: the datasets the
 * attacks read, the well-behaved client beside the attacker and its 1 s latency check, the ticket of a stream an
 * attacker opens and does not read on.
 */
final class LoadAttacks {
    /** Records of the {@code wide} dataset, 1 MiB (uint8) each. */
    static final int WIDE_RECORDS = 40;

    private LoadAttacks() {
    }

    /**
     * Writes {@code train} ({@link ServiceTestBase#SHARDS}) and {@code wide} ({@link #WIDE_RECORDS} records of 1 MiB,
     * one {@code .npy} shard) under {@code root}.
     *
     * @throws IOException if they cannot be written
     */
    static void writeDatasets(Path root) throws IOException {
        ServiceShards.write(root.resolve("train"), ServiceTestBase.SHARDS);
        Files.createDirectories(root.resolve("wide"));
        dev.gdsloader.formats.npy.NpyWriter.write(root.resolve("wide").resolve("x-00000.npy"), DType.UINT8,
                new long[] {WIDE_RECORDS, 1 << 20}, new byte[WIDE_RECORDS << 20]);
    }

    /** @return a builder of the client beside the attacker: {@code train}, 8 records a batch, HOST, 30 s timeout */
    static PrefetchClient.Builder bystander(int port) {
        return PrefetchClient.builder("127.0.0.1", port).dataset("train").batchSize(8).prefetchDepth(2).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30));
    }

    /** Reads one epoch, checking it has every record; @return the longest wait for a batch (the first's includes opening the stream), ms. */
    static long epochMaxWaitMillis(PrefetchClient c) {
        long worst = 0;
        long records = 0;
        Iterator<RemoteBatch> it = c.iterator();
        while (true) {
            long t0 = System.nanoTime();
            if (!it.hasNext()) {
                break;
            }
            try (RemoteBatch b = it.next()) {
                worst = Math.max(worst, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                records += b.records() - b.paddingCount();
            }
        }
        assertEquals(ServiceTestBase.RECORDS, records);
        return worst;
    }

    /** Fails unless the client beside the attacker waited under 1 s for every batch. */
    static void assertFast(long millis) {
        assertTrue(millis < 1_000, "the client beside the attacker waited " + millis + " ms for a batch");
    }

    /** @return the ticket of a {@code wide} stream, 1 record (1 MiB) a batch, prefetch depth 1, HOST */
    static Ticket wideTicket() {
        return new Ticket("{\"version\":4,\"dataset\":\"wide\",\"options\":{\"batchSize\":1,\"prefetchDepth\":1,\"path\":\"HOST\"}}"
                .getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Cancels and closes an attacker's streams, then closes its clients.
     *
     * @throws Exception if a stream or client fails to close
     */
    static void cancelAndClose(List<FlightStream> streams, List<FlightClient> clients) throws Exception {
        for (FlightStream s : streams) {
            s.cancel("done", null);
            s.close();
        }
        for (FlightClient c : clients) {
            c.close();
        }
    }
}
