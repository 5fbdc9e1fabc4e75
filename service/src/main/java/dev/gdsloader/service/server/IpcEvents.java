package dev.gdsloader.service.server;

import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaIpc;
import dev.gdsloader.cuda.CudaStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * Interprocess events ({@link CudaEvent#createInterprocess()}), one per batch that may be lent at once, and a stream of
 * the server's: per batch, the stream waits for the loader's ready event and records a free interprocess event, whose
 * handle the client waits on; no host synchronisation on the server. An event goes back to the pool when its batch is
 * released (the client has waited on it by then, and a later record only affects later waits). Thread-safe; closed
 * once by its owner (the exchange), after every batch came back.
 */
final class IpcEvents implements AutoCloseable {
    private final CudaStream stream;
    private final ArrayDeque<Event> free = new ArrayDeque<>();
    private final List<Event> all = new ArrayList<>();

    /**
     * One interprocess event and its handle.
     *
     * @param event the event
     * @param handle its {@link CudaIpc#eventHandle}, base64 (the metadata's {@code "event"})
     */
    record Event(CudaEvent event, String handle) {
    }

    private IpcEvents(CudaStream stream) {
        this.stream = stream;
    }

    /**
     * @param events events to make (the ring's slots)
     * @return the pool, owned by the caller
     * @throws dev.gdsloader.cuda.CudaException where the driver refuses interprocess events (the caller falls back
     *     to a host synchronisation and {@code "event": null})
     */
    static IpcEvents create(int events) {
        IpcEvents p = new IpcEvents(CudaStream.create());
        try {
            for (int i = 0; i < events; i++) {
                CudaEvent ev = CudaEvent.createInterprocess();
                Event e;
                try {
                    e = new Event(ev, Base64.getEncoder().encodeToString(CudaIpc.eventHandle(ev)));
                } catch (RuntimeException x) {
                    ev.close();
                    throw x;
                }
                p.all.add(e);
                p.free.add(e);
            }
            return p;
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
    }

    /**
     * Orders a free event after {@code ready} on the pool's stream ({@code cudaStreamWaitEvent}, then
     * {@code cudaEventRecord}); the host does not block.
     *
     * @param ready the batch's ready event
     * @return the event recorded, lent until {@link #giveBack}
     * @throws IllegalStateException if every event is lent (more batches lent than the pool was made for)
     * @throws dev.gdsloader.cuda.CudaException on a CUDA error
     */
    synchronized Event record(CudaEvent ready) {
        Event e = free.poll();
        if (e == null) {
            throw new IllegalStateException("all " + all.size() + " interprocess events are lent");
        }
        try {
            stream.waitFor(ready);
            e.event().record(stream);
            return e;
        } catch (RuntimeException x) {
            free.add(e);
            throw x;
        }
    }

    /** @param e an event from {@link #record}, whose batch the client released */
    synchronized void giveBack(Event e) {
        free.add(e);
    }

    /** Waits for the stream, destroys the events and the stream. Idempotent. */
    @Override
    public synchronized void close() {
        if (stream.isClosed()) {
            return;
        }
        try {
            stream.synchronize();
        } finally {
            for (Event e : all) {
                e.event().close();
            }
            all.clear();
            free.clear();
            stream.close();
        }
    }
}
