package dev.gdsloader.bench.service;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The raw loopback TCP copy ceiling of {@code serve-bench}: {@code bytes} sent over one loopback connection from one
 * Java thread to another with plain blocking NIO {@link SocketChannel}s, direct {@link ByteBuffer}s of
 * {@code bufferBytes} on both sides and 4 MiB socket buffers; nothing framed, nothing parsed, nothing copied but the
 * kernel's two copies. What a Flight client on the same host could get at best from one connection.
 *
 * <p>Stateless; each call opens and closes its own sockets and buffers (the direct buffers are freed by the garbage
 * collector). Thread-safe.
 */
final class LoopbackCeiling {
    /** Socket send/receive buffer size asked for, bytes (the kernel may cap it at net.core.[rw]mem_max). */
    static final int SOCKET_BUFFER = 4 << 20;

    /**
     * @param bytes bytes sent and received
     * @param seconds from the sender's first write to the receiver's last read
     */
    record Result(long bytes, double seconds) {
        /** @return GB/s (1e9 B/s) */
        double gbps() {
            return bytes / seconds / 1e9;
        }
    }

    private LoopbackCeiling() {
    }

    /**
     * Sends {@code bytes} from a sender thread to this thread over 127.0.0.1.
     *
     * @param bytes bytes to move, &gt; 0
     * @param bufferBytes size of each side's direct buffer (each write and read moves at most this), &gt; 0
     * @return bytes moved and the time taken
     * @throws IllegalArgumentException if {@code bytes} or {@code bufferBytes} is not positive
     * @throws IOException if a socket fails, naming which side
     * @throws InterruptedException if interrupted while waiting for the sender
     */
    static Result measure(long bytes, int bufferBytes) throws IOException, InterruptedException {
        if (bytes <= 0 || bufferBytes <= 0) {
            throw new IllegalArgumentException("loopback ceiling: bytes (" + bytes + ") and buffer bytes (" + bufferBytes
                    + ") must be > 0");
        }
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER);
            listener.bind(new InetSocketAddress(loopback, 0));
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread sender = Thread.ofPlatform().name("gdsloader-loopback-sender").daemon().start(() -> {
                try (SocketChannel out = SocketChannel.open()) {
                    out.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER);
                    out.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    out.connect(new InetSocketAddress(loopback, port));
                    ByteBuffer buf = ByteBuffer.allocateDirect(bufferBytes);
                    for (int i = 0; i < bufferBytes; i++) {
                        buf.put(i, (byte) i);
                    }
                    long left = bytes;
                    while (left > 0) {
                        buf.clear().limit((int) Math.min(bufferBytes, left));
                        while (buf.hasRemaining()) {
                            left -= out.write(buf);
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    failed.set(e);
                }
            });
            long got = 0;
            long t0;
            long t1;
            try (SocketChannel in = listener.accept()) {
                in.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER);
                ByteBuffer buf = ByteBuffer.allocateDirect(bufferBytes);
                t0 = System.nanoTime();
                while (got < bytes) {
                    buf.clear();
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    got += n;
                }
                t1 = System.nanoTime();
            } finally {
                sender.join();
            }
            if (failed.get() != null) {
                throw new IOException("loopback ceiling: the sender failed: " + failed.get(), failed.get());
            }
            if (got != bytes) {
                throw new IOException("loopback ceiling: received " + got + " of " + bytes + " bytes before the sender closed");
            }
            return new Result(bytes, (t1 - t0) / 1e9);
        }
    }
}
