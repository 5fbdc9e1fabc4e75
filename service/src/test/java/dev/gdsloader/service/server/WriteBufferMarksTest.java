package dev.gdsloader.service.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.ServiceTestBase;
import dev.gdsloader.service.client.PrefetchClient;
import io.netty.channel.Channel;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;


/** The server's accepted connections are tuned ({@link PrefetchServer#WRITE_BUFFER}); the client's: {@code TransportTuningTest}. */
class WriteBufferMarksTest extends ServiceTestBase {
    /** Every connection the server accepted has its write-buffer marks (2 MiB / 4 MiB), not Netty's 32/64 KiB. */
    @Test
    void theServersConnectionsHaveLargeWriteBufferMarks() throws Exception {
        try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").batchSize(8)
                .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).open()) {
            var it = c.iterator();
            it.next().close();
            List<Channel> open = server.guard().openConnections();
            assertFalse(open.isEmpty(), "the client's connection is open");
            for (Channel ch : open) {
                assertEquals(4 << 20, ch.config().getWriteBufferHighWaterMark(), ch.toString());
                assertEquals(2 << 20, ch.config().getWriteBufferLowWaterMark(), ch.toString());
            }
            while (it.hasNext()) {
                it.next().close();
            }
        }
        awaitSessions(0);
    }

}
