package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link LoaderHeap} counts what threads named {@code gdsloader-...} allocate (one that ends inside the stretch too),
 * not what other threads allocate, and takes out what the consumer says was its own work.
 */
class LoaderHeapTest {
    private static final int MIB = 1 << 20;
    @SuppressWarnings("UnusedVariable") // a sink: written so that the JIT keeps each allocation
    private static volatile Object sink;

    private static void allocate(int mib) {
        for (int i = 0; i < mib; i++) {
            sink = new byte[MIB];
        }
    }

    private static void runOn(String name, int mib) throws InterruptedException {
        Thread t = Thread.ofPlatform().name(name).start(() -> allocate(mib));
        t.join();
    }

    @Test
    void countsTheLoadersThreadsAndNotOthersNorTheConsumersOwnWork() throws Exception {
        assumeTrue(LoaderHeap.supported(), "this JVM does not count heap allocation per thread");
        Thread other = Thread.ofPlatform().name("progress-bar").unstarted(() -> allocate(64));
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch exit = new java.util.concurrent.CountDownLatch(1);
        Thread idle = Thread.ofPlatform().name("not-the-loader").start(() -> {
            try {
                go.await();
                allocate(32);
                done.countDown();
                exit.await(); // alive until the stretch ended (an ended thread's bytes cannot be told from the loader's)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        LoaderHeap heap = LoaderHeap.start();
        runOn("gdsloader-reader", 8); // ends before the stretch does: its bytes still count
        go.countDown();
        done.await(); // alive at the start and the end, not the loader's: taken out
        long c0 = LoaderHeap.consumerBytes();
        allocate(16); // the consumer's own work (checking), said below
        long own = LoaderHeap.consumerBytes() - c0;
        long loader = heap.end(own);
        exit.countDown();
        idle.join();
        assertTrue(loader >= 8L * MIB && loader < 12L * MIB, "8 MiB by the loader's thread, measured " + loader);
        other.start(); // started after the stretch: not counted
        other.join();
    }
}
