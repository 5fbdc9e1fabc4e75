package dev.gdsloader.service;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Turns Netty's leak reports ({@code ResourceLeakDetector} logs "LEAK: ..." when a tracked buffer is collected
 * unreleased) into test failures: Netty logs through java.util.logging here, and a handler collects the reports.
 * Call {@link #install()} before Netty's first use; {@link #check()} after each test.
 */
public final class NettyLeaks {
    private static final List<String> REPORTS = new CopyOnWriteArrayList<>();
    private static final Logger LEAK_LOGGER = Logger.getLogger(ResourceLeakDetector.class.getName());
    private static boolean installed;

    private NettyLeaks() {
    }

    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE);
        LEAK_LOGGER.setLevel(Level.ALL);
        LEAK_LOGGER.addHandler(new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getMessage() != null && r.getMessage().contains("LEAK")) {
                    REPORTS.add(r.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        });
    }

    /** Collects garbage, makes the detector look (it reports on allocation), and fails on any report. */
    public static void check() throws InterruptedException {
        for (int round = 0; round < 3; round++) {
            Await.collected();
            for (int i = 0; i < 100; i++) {
                ByteBuf a = ByteBufAllocator.DEFAULT.directBuffer(16);
                ByteBuf b = ByteBufAllocator.DEFAULT.heapBuffer(16);
                ByteBuf c = Unpooled.directBuffer(16);
                a.release();
                b.release();
                c.release();
            }
        }
        if (!REPORTS.isEmpty()) {
            String all = String.join("\n", REPORTS);
            REPORTS.clear();
            throw new AssertionError("Netty reported leaked buffers:\n" + all);
        }
    }
}
