package dev.gdsloader.cuda;

import jcuda.runtime.JCuda;

/**
 * A CUDA event, without timing ({@code cudaEventDisableTiming}) unless made by {@link #createTimed()}: a marker recorded on a stream that other
 * streams or the host can wait for. A host wait ({@link #synchronize()}) blocks the thread instead of spinning
 * ({@code cudaEventBlockingSync}): the loader waits on slot events once per batch, and a spinning wait would burn a
 * core the training job needs for a few microseconds of wake-up latency saved. Destroyed once by {@link #close()}.
 *
 * <p>Owned by its creator. Safe to record from one thread and wait on from another, as CUDA allows.
 */
public final class CudaEvent extends NativeResource {
    final NativeAddress.AddressEvent event = new NativeAddress.AddressEvent();
    private final boolean timed;
    /** {@link #elapsedNanos}'s out parameter, reused: a per-batch timing allocates nothing. */
    private final float[] elapsedMillis = new float[1];

    private CudaEvent(boolean timed, int flags, String call) {
        this.timed = timed;
        Cuda.check(JCuda.cudaEventCreateWithFlags(event, flags), call);
        trackLeaks();
    }

    /**
     * Creates an event on the current device.
     *
     * @return the event, owned by the caller
     * @throws CudaException if CUDA is unavailable
     */
    public static CudaEvent create() {
        Cuda.ensure();
        return new CudaEvent(false, JCuda.cudaEventDisableTiming | JCuda.cudaEventBlockingSync,
                "cudaEventCreateWithFlags(cudaEventDisableTiming | cudaEventBlockingSync)");
    }

    /**
     * Creates an event that keeps the GPU time it completed at, so that {@link #elapsedNanos} can measure GPU time
     * between two of them (recording it costs a little more than an untimed event's).
     *
     * @return the event, owned by the caller
     * @throws CudaException if CUDA is unavailable
     */
    public static CudaEvent createTimed() {
        Cuda.ensure();
        return new CudaEvent(true, JCuda.cudaEventBlockingSync, "cudaEventCreateWithFlags(cudaEventBlockingSync)");
    }

    /**
     * Creates an event another process can open and wait on ({@code cudaEventDisableTiming | cudaEventInterprocess};
     * its handle: {@link CudaIpc#eventHandle}). A host wait on it spins (interprocess events cannot be blocking-sync).
     *
     * @return the event, owned by the caller
     * @throws CudaException if CUDA is unavailable or the driver refuses interprocess events
     */
    public static CudaEvent createInterprocess() {
        Cuda.ensure();
        return new CudaEvent(false, JCuda.cudaEventDisableTiming | JCuda.cudaEventInterprocess,
                "cudaEventCreateWithFlags(cudaEventDisableTiming | cudaEventInterprocess)");
    }

    /**
     * GPU time from {@code start} to this event ({@code cudaEventElapsedTime}, resolution about 0.5 microseconds),
     * both timed ({@link #createTimed()}) and completed. One thread at a time per end event.
     *
     * @param start the earlier event
     * @return nanoseconds, rounded from CUDA's float milliseconds
     * @throws IllegalStateException if either event is untimed or closed
     * @throws CudaException if either has not completed or was never recorded
     */
    public long elapsedNanos(CudaEvent start) {
        checkOpen();
        start.checkOpen();
        if (!timed || !start.timed) {
            throw new IllegalStateException("elapsed time needs two timed events (CudaEvent.createTimed)");
        }
        Cuda.check(JCuda.cudaEventElapsedTime(elapsedMillis, start.event, event), "cudaEventElapsedTime");
        return Math.round(elapsedMillis[0] * 1e6);
    }

    /**
     * Records this event at the current end of {@code stream}'s work ({@code cudaEventRecord}).
     *
     * @param stream the stream
     * @throws CudaException on a CUDA error
     */
    public void record(CudaStream stream) {
        checkOpen();
        Cuda.check(JCuda.cudaEventRecord(event, stream.stream), "cudaEventRecord");
    }

    /**
     * Blocks the calling thread until the recorded work is done ({@code cudaEventSynchronize}).
     *
     * @throws CudaException if the work failed or on a CUDA error
     */
    public void synchronize() {
        checkOpen();
        Cuda.check(JCuda.cudaEventSynchronize(event), "cudaEventSynchronize");
    }

    /** @return the raw {@code cudaEvent_t} value, to pass to other native libraries */
    public long address() {
        checkOpen();
        return event.address();
    }

    @Override
    protected void free() {
        Cuda.check(JCuda.cudaEventDestroy(event), "cudaEventDestroy");
    }

    @Override
    protected String describe() {
        return "CUDA event";
    }
}
