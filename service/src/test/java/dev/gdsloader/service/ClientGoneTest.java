package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.ReadPath;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client whose connection dies mid-stream (as when its process is killed with {@code kill -9}): a real server on
 * loopback, the client reaching it through a TCP relay whose sockets are then reset ({@code SO_LINGER 0}) while the
 * server still has batches queued to the stream. The server's log gets one INFO line per stream, no WARNING and no
 * stack trace, and the session is freed.
 */
@Timeout(120)
class ClientGoneTest extends ServiceTestBase {
    /** Copies one socket's bytes to another until either closes. */
    private static void relay(Socket from, Socket to) {
        Thread.ofPlatform().daemon().name("relay").start(() -> {
            try {
                from.getInputStream().transferTo(to.getOutputStream());
            } catch (java.io.IOException e) {
                // the sockets were reset: the relay ends
            }
        });
    }

    @Test
    void aClientResetMidStreamIsOneInfoLineWithoutAStackTrace() throws Exception {
        Path big = Files.createDirectories(root.resolve("big"));
        NpyWriter.write(big.resolve("x-00000.npy"), DType.UINT8, new long[] {64, 1 << 20}, new byte[64 << 20]);
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger all = Logger.getLogger("");
        all.addHandler(capture);
        try {
            for (int attempt = 0; attempt < 5 && records.stream().noneMatch(r -> r.getLoggerName().equals(ClientGoneLog.GRPC_LOGGER));
                    attempt++) {
                resetMidStream();
            }
        } finally {
            all.removeHandler(capture);
        }
        List<LogRecord> gone = records.stream().filter(r -> r.getLoggerName().equals(ClientGoneLog.GRPC_LOGGER)).toList();
        assertFalse(gone.isEmpty(), "the server logged nothing for the stream it was writing to: the test did not reset mid-stream");
        for (LogRecord r : gone) {
            assertEquals(Level.INFO, r.getLevel(), r.getMessage() + " / " + r.getThrown());
            assertNull(r.getThrown(), "no stack trace: " + r.getMessage());
            assertTrue(r.getMessage().matches("gdsloader: a client went away mid-stream \\(HTTP/2 stream \\d+ closed with batches "
                    + "still queued to it\\); its session is freed"), r.getMessage());
        }
        for (LogRecord r : records) {
            assertTrue(r.getLevel().intValue() < Level.WARNING.intValue(), "a " + r.getLevel() + " from " + r.getLoggerName() + ": "
                    + r.getMessage() + " / " + r.getThrown());
        }
    }

    /** Only the stream error of a write queued to a closed stream is rewritten: another stays a WARNING with its stack. */
    @Test
    void otherStreamErrorsStayWarningsWithTheirException() {
        LogRecord other = new LogRecord(Level.WARNING, "Stream Error");
        Throwable bad = io.netty.handler.codec.http2.Http2Exception.streamError(5, io.netty.handler.codec.http2.Http2Error.PROTOCOL_ERROR,
                "a malformed frame");
        other.setThrown(bad);
        assertFalse(ClientGoneLog.rewrite(other));
        assertEquals(Level.WARNING, other.getLevel());
        assertEquals(bad, other.getThrown());
        LogRecord gone = new LogRecord(Level.WARNING, "Stream Error");
        gone.setThrown(io.netty.handler.codec.http2.Http2Exception.streamError(7, io.netty.handler.codec.http2.Http2Error.INTERNAL_ERROR,
                ClientGoneLog.CLOSED_BEFORE_WRITE));
        assertTrue(ClientGoneLog.rewrite(gone));
        assertEquals("gdsloader: a client went away mid-stream (HTTP/2 stream 7 closed with batches still queued to it); its "
                + "session is freed", gone.getMessage());
    }

    /** A client reads one batch through a relay, which then resets both its connections; @return after the session is freed. */
    private void resetMidStream() throws Exception {
        List<Socket> sockets = new CopyOnWriteArrayList<>();
        ServerSocket relay = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
        try {
            Thread.ofPlatform().daemon().name("relay-accept").start(() -> {
                try {
                    while (true) {
                        Socket down = relay.accept();
                        Socket up = new Socket();
                        up.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()));
                        sockets.add(down);
                        sockets.add(up);
                        relay(down, up);
                        relay(up, down);
                    }
                } catch (java.io.IOException e) {
                    // the relay's socket closed: no more connections
                }
            });
            PrefetchClient c = PrefetchClient.builder("127.0.0.1", relay.getLocalPort()).dataset("big").batchSize(4)
                    .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).reconnectTimeout(Duration.ofMillis(200)).open();
            try {
                c.iterator().next().close(); // the server goes on sending into the flow-control window: writes queue
                Thread.sleep(300);
                relay.close(); // no reconnect through it
                for (Socket s : sockets) {
                    s.setSoLinger(true, 0); // close sends RST, as the kernel does for a killed process with unread bytes
                    s.close();
                }
                awaitSessions(0);
            } finally {
                try {
                    c.close();
                } catch (PrefetchServiceException e) {
                    // its server is unreachable now: expected
                }
            }
        } finally {
            relay.close();
        }
    }
}
