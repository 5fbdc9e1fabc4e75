package dev.gdsloader.service;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.DeviceBuffer;
import java.lang.reflect.Field;
import java.util.Base64;
import jcuda.Pointer;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaIpcMemHandle;

/**
 * CUDA IPC memory handles as the service sends them: 64 opaque bytes ({@code CUDA_IPC_HANDLE_SIZE}), base64 in
 * the JSON header.
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

    static {
        try {
            RESERVED = cudaIpcMemHandle.class.getDeclaredField("reserved");
            RESERVED.setAccessible(true);
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

    /** A JCuda pointer whose address can be read. */
    static final class DevicePointer extends Pointer {
        /** @return the device address */
        long address() {
            return getNativePointer();
        }
    }
}
