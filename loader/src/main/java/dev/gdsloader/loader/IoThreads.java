package dev.gdsloader.loader;

import dev.gdsloader.cuda.CudaDevice;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where a loader's reads run: its own pool of I/O threads ({@code gdsloader-io-N}, daemons), or a caller's executor;
 * on a device path either way the loader's GPU is made current on the thread before each task. Stateless.
 */
final class IoThreads {
    private IoThreads() {
    }

    /**
     * @param threads I/O threads, started as tasks arrive
     * @param queue tasks the pool may hold queued (enough for every task of every slot, so submitting never blocks)
     * @param device CUDA ordinal made current on each thread, when {@code gpu}
     * @param gpu whether the loader's path is on a device
     * @return the pool, owned by the caller (shut down on close)
     */
    static ThreadPoolExecutor pool(int threads, int queue, int device, boolean gpu) {
        AtomicInteger n = new AtomicInteger();
        return new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(queue),
                r -> Thread.ofPlatform().daemon().name("gdsloader-io-" + n.getAndIncrement()).unstarted(() -> {
                    if (gpu) {
                        CudaDevice.makeCurrent(device);
                    }
                    r.run();
                }));
    }

    /** @return {@code executor}, making {@code device} current on the running thread before each task when {@code gpu} */
    static Executor onDevice(Executor executor, int device, boolean gpu) {
        return !gpu ? executor : r -> executor.execute(() -> {
            CudaDevice.makeCurrent(device);
            r.run();
        });
    }
}
