package dev.gdsloader.service;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.CudaEvent;
import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaEvent_t;
import jcuda.runtime.cudaIpcEventHandle;
import jcuda.runtime.cudaIpcMemHandle;
import jcuda.runtime.cudaStream_t;

/**
 * CUDA IPC memory and event handles as the service sends them: 64 opaque bytes ({@code CUDA_IPC_HANDLE_SIZE}), base64
 * in the JSON metadata.
 *
 * <p>The rules (CUDA Runtime API, "Interprocess Communication"): {@code cudaIpcGetMemHandle} takes the base of
 * an allocation made with {@code cudaMalloc} (our {@link DeviceBuffer}s are each one such allocation);
 * {@code cudaIpcOpenMemHandle} cannot open a handle in the process that created it, maps the whole allocation
 * once per process and context (opening the same handle twice is an error, so the client caches mappings),
 * and the mapping is undone by {@code cudaIpcCloseMemHandle}; the exporting process must keep the allocation
 * alive while importers have it mapped. Stateless; thread-safe.
 */
final class CudaIpc {
    /** Bytes of a {@code cudaIpcMemHandle_t}. */
    static final int HANDLE_BYTES = 64;
    private static final Field RESERVED;
    private static final Field EVENT_RESERVED;
    private static final Field NATIVE_POINTER;

    static {
        try {
            RESERVED = cudaIpcMemHandle.class.getDeclaredField("reserved");
            RESERVED.setAccessible(true);
            EVENT_RESERVED = cudaIpcEventHandle.class.getDeclaredField("reserved");
            EVENT_RESERVED.setAccessible(true);
            NATIVE_POINTER = NativePointerObject.class.getDeclaredField("nativePointer");
            NATIVE_POINTER.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private CudaIpc() {
    }

    /**
     * @param buffer a device buffer (one {@code cudaMalloc} allocation) of this process
     * @return its IPC handle, base64
     * @throws dev.gdsloader.cuda.CudaException if CUDA refuses ({@code cudaIpcGetMemHandle})
     */
    static String handleOf(DeviceBuffer buffer) {
        cudaIpcMemHandle h = new cudaIpcMemHandle();
        Cuda.check(JCuda.cudaIpcGetMemHandle(h, buffer.pointer(0)), "cudaIpcGetMemHandle(" + buffer.size() + " byte slot buffer)");
        return Base64.getEncoder().encodeToString(bytes(h));
    }

    /**
     * Maps another process's allocation into this one ({@code cudaIpcOpenMemHandle} with
     * {@code cudaIpcMemLazyEnablePeerAccess}) on the current device.
     *
     * @param base64 a handle from {@link #handleOf}, made by another process
     * @return the mapping's base pointer; close it with {@link #close}
     * @throws IllegalArgumentException if the handle is not 64 bytes of base64
     * @throws dev.gdsloader.cuda.CudaException if CUDA refuses (e.g. the handle was made by this process)
     */
    static DevicePointer open(String base64) {
        byte[] raw = Base64.getDecoder().decode(base64);
        if (raw.length != HANDLE_BYTES) {
            throw new IllegalArgumentException("CUDA IPC handle must be " + HANDLE_BYTES + " bytes, got " + raw.length);
        }
        cudaIpcMemHandle h = new cudaIpcMemHandle();
        try {
            RESERVED.set(h, raw);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot fill a cudaIpcMemHandle", e);
        }
        DevicePointer p = new DevicePointer();
        Cuda.check(JCuda.cudaIpcOpenMemHandle(p, h, JCuda.cudaIpcMemLazyEnablePeerAccess),
                "cudaIpcOpenMemHandle (it cannot open a handle in the process that created it)");
        return p;
    }

    /** Unmaps a pointer from {@link #open} ({@code cudaIpcCloseMemHandle}). */
    static void close(DevicePointer p) {
        Cuda.check(JCuda.cudaIpcCloseMemHandle(p), "cudaIpcCloseMemHandle");
    }

    private static byte[] bytes(cudaIpcMemHandle h) {
        try {
            return ((byte[]) RESERVED.get(h)).clone();
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read a cudaIpcMemHandle", e);
        }
    }

    /**
     * Opens another process's interprocess event ({@code cudaIpcOpenEventHandle}) on the current device.
     *
     * @param base64 a 64-byte {@code cudaIpcEventHandle_t}, base64
     * @return the event; destroy it with {@code cudaEventDestroy} when no longer waited on
     * @throws IllegalArgumentException if the handle is not 64 bytes of base64
     * @throws dev.gdsloader.cuda.CudaException if CUDA refuses
     */
    static cudaEvent_t openEvent(String base64) {
        byte[] raw = Base64.getDecoder().decode(base64);
        if (raw.length != HANDLE_BYTES) {
            throw new IllegalArgumentException("CUDA IPC event handle must be " + HANDLE_BYTES + " bytes, got " + raw.length);
        }
        cudaIpcEventHandle h = new cudaIpcEventHandle();
        try {
            EVENT_RESERVED.set(h, raw);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot fill a cudaIpcEventHandle", e);
        }
        cudaEvent_t ev = new cudaEvent_t();
        Cuda.check(JCuda.cudaIpcOpenEventHandle(ev, h), "cudaIpcOpenEventHandle");
        return ev;
    }

    /**
     * Interprocess events ({@code cudaEventDisableTiming | cudaEventInterprocess}), one per batch that may be lent at
     * once, and a stream of the server's: per batch, the stream waits for the loader's ready event and records a free
     * interprocess event, whose handle the client waits on; no host synchronisation on the server. An event goes back
     * to the pool when its batch is released (the client has waited on it by then, and a later record only affects
     * later waits). Thread-safe; closed once by its owner (the exchange), after every batch came back.
     */
    static final class EventPool implements AutoCloseable {
        private final cudaStream_t stream = new cudaStream_t();
        private final ArrayDeque<Event> free = new ArrayDeque<>();
        private final List<Event> all = new ArrayList<>();
        private boolean streamCreated;

        /** One interprocess event and its handle, base64. */
        record Event(cudaEvent_t event, String handle) {
        }

        private EventPool() {
        }

        /**
         * @param events events to make (the ring's slots)
         * @return the pool, owned by the caller
         * @throws dev.gdsloader.cuda.CudaException where the driver refuses interprocess events (the caller falls back
         *     to a host synchronisation and {@code "event": null})
         */
        static EventPool create(int events) {
            EventPool p = new EventPool();
            try {
                Cuda.check(JCuda.cudaStreamCreateWithFlags(p.stream, JCuda.cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
                p.streamCreated = true;
                for (int i = 0; i < events; i++) {
                    cudaEvent_t ev = new cudaEvent_t();
                    Cuda.check(JCuda.cudaEventCreateWithFlags(ev, JCuda.cudaEventDisableTiming | JCuda.cudaEventInterprocess),
                            "cudaEventCreateWithFlags(cudaEventDisableTiming | cudaEventInterprocess)");
                    Event e;
                    try {
                        cudaIpcEventHandle h = new cudaIpcEventHandle();
                        Cuda.check(JCuda.cudaIpcGetEventHandle(h, ev), "cudaIpcGetEventHandle");
                        e = new Event(ev, Base64.getEncoder().encodeToString(((byte[]) EVENT_RESERVED.get(h)).clone()));
                    } catch (IllegalAccessException | RuntimeException x) {
                        JCuda.cudaEventDestroy(ev);
                        throw x instanceof RuntimeException r ? r : new IllegalStateException("cannot read a cudaIpcEventHandle", x);
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
                Cuda.check(JCuda.cudaStreamWaitEvent(stream, raw(ready.address()), 0), "cudaStreamWaitEvent(batch ready event)");
                Cuda.check(JCuda.cudaEventRecord(e.event(), stream), "cudaEventRecord(interprocess event)");
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
            if (streamCreated) {
                JCuda.cudaStreamSynchronize(stream);
            }
            for (Event e : all) {
                JCuda.cudaEventDestroy(e.event());
            }
            all.clear();
            free.clear();
            if (streamCreated) {
                JCuda.cudaStreamDestroy(stream);
                streamCreated = false;
            }
        }

        /** @return a JCuda event naming the raw {@code cudaEvent_t} value of this process's event */
        private static cudaEvent_t raw(long address) {
            cudaEvent_t ev = new cudaEvent_t();
            try {
                NATIVE_POINTER.setLong(ev, address);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot name a cudaEvent_t", e);
            }
            return ev;
        }
    }

    /** A JCuda pointer whose address can be read. */
    static final class DevicePointer extends Pointer {
        /** @return the device address */
        long address() {
            return getNativePointer();
        }
    }
}
