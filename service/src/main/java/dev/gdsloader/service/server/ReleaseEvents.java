package dev.gdsloader.service.server;

import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaIpc;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.Batch;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/**
 * The client's release events of one CUDA_IPC exchange ({@code {"release": ID, "event": HANDLE}}, service/README.md):
 * each handle is opened once ({@code cuIpcOpenEventHandle}); a release makes a stream of the server's wait for the
 * client's event ({@code cuStreamWaitEvent}) and releases the batch after it ({@link Batch#release(CudaStream)}), so the
 * loader refills the slot only after the client's work on it, and no thread blocks. Its own stream, not the exchange's
 * event stream: a slow consumer delays only the reuse of its slots, not the next batch's ready event. Thread-safe; the
 * exchange's reader thread releases, its owner closes it once.
 */
final class ReleaseEvents implements AutoCloseable {
    private final int device;
    private final Map<String, CudaIpc.OpenedEvent> opened = new HashMap<>();
    private CudaStream stream;
    private boolean closed;

    /** @param device the CUDA device of the exchange's loader */
    ReleaseEvents(int device) {
        this.device = device;
    }

    /**
     * Releases {@code b} after the client's event: at once on the host if this is closed (the exchange ended).
     *
     * @param b a batch the client released
     * @param handle the client's interprocess event handle, base64
     * @throws IllegalArgumentException if the handle is not 64 bytes of base64
     * @throws dev.gdsloader.cuda.CudaException if CUDA refuses to open or wait on it
     */
    synchronized void release(Batch b, String handle) {
        if (closed) {
            b.close();
            return;
        }
        if (stream == null) {
            CudaDevice.makeCurrent(device);
            stream = CudaStream.create();
        }
        CudaIpc.OpenedEvent e = opened.get(handle);
        if (e == null) {
            e = CudaIpc.openEventHandle(Base64.getDecoder().decode(handle));
            opened.put(handle, e);
        }
        e.awaitOn(stream);
        b.release(stream);
    }

    /** Waits for the stream, closes the opened events and the stream; later releases close their batch at once. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (stream != null) {
                stream.synchronize();
            }
        } finally {
            for (CudaIpc.OpenedEvent e : opened.values()) {
                e.close();
            }
            opened.clear();
            if (stream != null) {
                stream.close();
            }
        }
    }
}
