package dev.gdsloader.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;

/**
 * CUDA interprocess handles of device memory and events: 64 opaque bytes ({@code CU_IPC_HANDLE_SIZE}) that another
 * process on the same host opens to map the memory or wait on the event. Bound through the FFM API to the driver API
 * in {@code libcuda.so.1} ({@code cuIpcGetMemHandle}, {@code cuIpcOpenMemHandle_v2}, {@code cuIpcCloseMemHandle},
 * {@code cuIpcGetEventHandle}, {@code cuIpcOpenEventHandle}, {@code cuStreamWaitEvent}, {@code cuEventSynchronize},
 * {@code cuEventDestroy_v2}), with the handle as a plain 64-byte struct: the runtime's device pointers, streams and
 * events are the driver's, in the device's primary context, which the calling thread must have current
 * ({@link CudaDevice#makeCurrent}).
 *
 * <p>The rules (CUDA Programming Guide, "Interprocess Communication"): a memory handle is taken of the base of a
 * {@code cudaMalloc} allocation (each {@link DeviceBuffer} is one); a handle cannot be opened in the process that made
 * it; a process maps an allocation once per context (opening the same handle twice is an error, so callers cache
 * mappings) until {@link #closeMemHandle}; the exporting process keeps the allocation alive while others map it. An
 * event handle is taken of an event made with {@code cudaEventInterprocess} ({@link CudaEvent#createInterprocess()}).
 * Stateless; thread-safe.
 */
// restricted (javac lint): this class exists to bind C functions through FFM's restricted Linker API;
// the JVM checks native access at run time (--enable-native-access, bin/jvm-flags)
@SuppressWarnings("restricted")
public final class CudaIpc {
    /** Bytes of a memory or event handle ({@code CU_IPC_HANDLE_SIZE}). */
    public static final int HANDLE_BYTES = 64;
    /** {@code CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS}, the runtime's {@code cudaIpcMemLazyEnablePeerAccess}. */
    private static final int LAZY_ENABLE_PEER_ACCESS = 1;
    private static final MemoryLayout HANDLE = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(HANDLE_BYTES, ValueLayout.JAVA_BYTE).withName("reserved"));

    private CudaIpc() {
    }

    /**
     * @param buffer a device buffer of this process (one {@code cudaMalloc} allocation)
     * @return its memory handle, {@value #HANDLE_BYTES} bytes
     * @throws CudaException if the driver refuses ({@code cuIpcGetMemHandle}) or is missing
     */
    public static byte[] memHandle(DeviceBuffer buffer) {
        return handleOf(Driver.GET_MEM, "cuIpcGetMemHandle", buffer.address(), "(" + buffer.size() + " byte device buffer)");
    }

    /**
     * @param function {@link Driver#GET_MEM} or {@link Driver#GET_EVENT}
     * @param name the driver function, for messages
     * @param address the device pointer or {@code CUevent}
     * @param what what it is, for messages
     * @return the handle the function wrote
     */
    private static byte[] handleOf(int function, String name, long address, String what) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment h = a.allocate(HANDLE);
            int rc = (int) Driver.handle(function, name).invokeExact(h, address);
            check(rc, name + what);
            return h.toArray(ValueLayout.JAVA_BYTE);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(name + " failed: " + t, t);
        }
    }

    /**
     * @param function a driver function of one {@code CUdeviceptr} or {@code CUevent} argument
     * @param name its name, for messages
     * @param address the argument
     * @param what what it is, for messages
     * @throws CudaException if the function returns an error
     */
    private static void callOn(int function, String name, long address, String what) {
        int rc;
        try {
            rc = (int) Driver.handle(function, name).invokeExact(address);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(name + " failed: " + t, t);
        }
        check(rc, name + what);
    }

    /**
     * Maps another process's allocation into this one, on the current device ({@code cuIpcOpenMemHandle_v2} with
     * {@code CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS}).
     *
     * @param handle a memory handle from {@link #memHandle}, made by another process
     * @return the device address of the mapping's first byte; unmap it once with {@link #closeMemHandle}
     * @throws IllegalArgumentException if the handle is not {@value #HANDLE_BYTES} bytes
     * @throws CudaException if the driver refuses (e.g. the handle was made by this process)
     */
    public static long openMemHandle(byte[] handle) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment h = handleSegment(a, handle, "");
            MemorySegment out = a.allocate(ValueLayout.JAVA_LONG);
            int rc = (int) Driver.handle(Driver.OPEN_MEM, "cuIpcOpenMemHandle_v2").invokeExact(out, h, LAZY_ENABLE_PEER_ACCESS);
            check(rc, "cuIpcOpenMemHandle (it cannot open a handle in the process that created it)");
            return out.get(ValueLayout.JAVA_LONG, 0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cuIpcOpenMemHandle_v2 failed: " + t, t);
        }
    }

    /**
     * Unmaps a mapping from {@link #openMemHandle} ({@code cuIpcCloseMemHandle}).
     *
     * @param address the address {@link #openMemHandle} returned
     * @throws CudaException if the driver refuses
     */
    public static void closeMemHandle(long address) {
        callOn(Driver.CLOSE_MEM, "cuIpcCloseMemHandle", address, "");
    }

    /**
     * @param event an event of this process made with {@link CudaEvent#createInterprocess()}
     * @return its event handle, {@value #HANDLE_BYTES} bytes
     * @throws CudaException if the driver refuses ({@code cuIpcGetEventHandle}: e.g. not an interprocess event)
     */
    public static byte[] eventHandle(CudaEvent event) {
        return handleOf(Driver.GET_EVENT, "cuIpcGetEventHandle", event.address(), "");
    }

    /**
     * Opens another process's interprocess event on the current device ({@code cuIpcOpenEventHandle}).
     *
     * @param handle an event handle from {@link #eventHandle}, made by another process
     * @return the event, owned by the caller (close it once no stream waits on it any more)
     * @throws IllegalArgumentException if the handle is not {@value #HANDLE_BYTES} bytes
     * @throws CudaException if the driver refuses (e.g. the handle was made by this process: the driver answers
     *         {@code CUDA_ERROR_INVALID_CONTEXT}, as the H100 showed)
     */
    public static OpenedEvent openEventHandle(byte[] handle) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment h = handleSegment(a, handle, "event ");
            MemorySegment out = a.allocate(ValueLayout.JAVA_LONG);
            int rc = (int) Driver.handle(Driver.OPEN_EVENT, "cuIpcOpenEventHandle").invokeExact(out, h);
            check(rc, "cuIpcOpenEventHandle (it cannot open a handle in the process that created it)");
            return new OpenedEvent(out.get(ValueLayout.JAVA_LONG, 0));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("cuIpcOpenEventHandle failed: " + t, t);
        }
    }

    /** @param what {@code ""} or {@code "event "}, for the message */
    private static MemorySegment handleSegment(Arena a, byte[] handle, String what) {
        if (handle.length != HANDLE_BYTES) {
            throw new IllegalArgumentException("CUDA IPC " + what + "handle must be " + HANDLE_BYTES + " bytes, got " + handle.length);
        }
        MemorySegment h = a.allocate(HANDLE);
        h.copyFrom(MemorySegment.ofArray(handle));
        return h;
    }

    private static void check(int rc, String call) {
        if (rc != 0) {
            throw new CudaException(call, rc, HostRegistration.Driver.errorName(rc));
        }
    }

    /**
     * Another process's event opened in this one ({@link #openEventHandle}): streams of this process can wait on what
     * the other process recorded, without the host blocking. Destroyed once by {@link #close()}. Owned by its opener;
     * safe to wait on from any thread, as CUDA allows.
     */
    public static final class OpenedEvent extends NativeResource {
        private final long event;

        private OpenedEvent(long event) {
            this.event = event;
            trackLeaks();
        }

        /**
         * Makes later work on {@code stream} wait until the other process's last record of this event has completed
         * ({@code cuStreamWaitEvent}); the host does not block.
         *
         * @param stream a stream of this process
         * @throws CudaException on a CUDA error
         */
        public void awaitOn(CudaStream stream) {
            checkOpen();
            int rc;
            try {
                rc = (int) Driver.handle(Driver.STREAM_WAIT, "cuStreamWaitEvent").invokeExact(stream.address(), event, 0);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("cuStreamWaitEvent failed: " + t, t);
            }
            check(rc, "cuStreamWaitEvent(another process's event)");
        }

        /**
         * Blocks the calling thread until the other process's last record of this event has completed
         * ({@code cuEventSynchronize}).
         *
         * @throws CudaException if the work failed or on a CUDA error
         */
        public void synchronize() {
            checkOpen();
            callOn(Driver.SYNCHRONIZE, "cuEventSynchronize", event, "(another process's event)");
        }

        @Override
        protected void free() {
            callOn(Driver.DESTROY, "cuEventDestroy_v2", event, "(another process's event)");
        }

        @Override
        protected String describe() {
            return "CUDA IPC event opened from another process";
        }
    }

    /** The driver functions, bound once; absent where {@code libcuda.so.1} is not there. */
    private static final class Driver {
        static final int GET_MEM = 0;
        static final int OPEN_MEM = 1;
        static final int CLOSE_MEM = 2;
        static final int GET_EVENT = 3;
        static final int OPEN_EVENT = 4;
        static final int STREAM_WAIT = 5;
        static final int SYNCHRONIZE = 6;
        static final int DESTROY = 7;
        private static final MethodHandle[] HANDLES = bind();

        private Driver() {
        }

        private static MethodHandle[] bind() {
            MethodHandle[] h = new MethodHandle[8];
            try {
                SymbolLookup lib = SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
                Linker l = Linker.nativeLinker();
                ValueLayout.OfInt i = ValueLayout.JAVA_INT;
                ValueLayout.OfLong p = ValueLayout.JAVA_LONG;
                ValueLayout out = ValueLayout.ADDRESS;
                h[GET_MEM] = bind(lib, l, "cuIpcGetMemHandle", FunctionDescriptor.of(i, out, p));
                h[OPEN_MEM] = bind(lib, l, "cuIpcOpenMemHandle_v2", FunctionDescriptor.of(i, out, HANDLE, i));
                h[CLOSE_MEM] = bind(lib, l, "cuIpcCloseMemHandle", FunctionDescriptor.of(i, p));
                h[GET_EVENT] = bind(lib, l, "cuIpcGetEventHandle", FunctionDescriptor.of(i, out, p));
                h[OPEN_EVENT] = bind(lib, l, "cuIpcOpenEventHandle", FunctionDescriptor.of(i, out, HANDLE));
                h[STREAM_WAIT] = bind(lib, l, "cuStreamWaitEvent", FunctionDescriptor.of(i, p, p, i));
                h[SYNCHRONIZE] = bind(lib, l, "cuEventSynchronize", FunctionDescriptor.of(i, p));
                h[DESTROY] = bind(lib, l, "cuEventDestroy_v2", FunctionDescriptor.of(i, p));
            } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
                Arrays.fill(h, null);
            }
            return h;
        }

        private static MethodHandle bind(SymbolLookup lib, Linker l, String name, FunctionDescriptor fd) {
            return lib.find(name).map(a -> l.downcallHandle(a, fd)).orElse(null);
        }

        /**
         * @return the bound function
         * @throws CudaException (unavailable) if {@code libcuda.so.1} or the symbol is missing
         */
        static MethodHandle handle(int function, String name) {
            MethodHandle h = HANDLES[function];
            if (h == null) {
                throw new CudaException("no " + name + " in libcuda.so.1", null);
            }
            return h;
        }
    }
}
