package dev.gdsloader.cuda;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Host memory page-locked in place and mapped into the GPU's address space: the driver API's
 * {@code cuMemHostRegister_v2} (the call under the runtime's {@code cudaHostRegister}, same flag values), bound
 * through FFM from {@code libcuda.so.1} with raw addresses. A range over {@link #MAX_BYTES_PER_CALL} is registered
 * in several calls (one registration of 512 GiB or more fails on current drivers); the device addresses of the
 * pieces must lie at one fixed distance from the host addresses (always so with unified addressing), else the
 * registration is refused, so that {@link #deviceAddress} is one addition.
 *
 * <p>A failed call is reported by its error name ({@code cuGetErrorName}), and the runtime's last error is cleared
 * ({@code cudaGetLastError}) so that no later runtime call reports a stale error. Call on a thread whose current
 * context is the device's primary context ({@link CudaDevice#makeCurrent}). Owned by its creator;
 * {@link #close()} unregisters once (before the memory is unmapped; from a thread without a current context it
 * makes the registering device current first). Thread-safe.
 */
// restricted (javac lint): this class exists to bind C functions through FFM's restricted Linker API;
// the JVM checks native access at run time (--enable-native-access, bin/jvm-flags)
@SuppressWarnings("restricted")
public final class HostRegistration implements AutoCloseable {
    /** Largest range registered in one call, bytes (64 GiB). */
    public static final long MAX_BYTES_PER_CALL = 64L << 30;
    /** {@code cudaHostRegisterPortable}: pinned for every context. */
    public static final int PORTABLE = 0x01;
    /** {@code cudaHostRegisterMapped}: mapped into the device's address space (kernels may read it). */
    public static final int MAPPED = 0x02;
    /** {@code cudaHostRegisterIoMemory}: the range is I/O memory. */
    public static final int IO_MEMORY = 0x04;
    /** {@code cudaHostRegisterReadOnly}: the device only reads it (needed for a {@code PROT_READ} mapping). */
    public static final int READ_ONLY = 0x08;
    /** {@code cudaDevAttrHostRegisterSupported} (CUDA runtime headers; the driver's attribute 99 too). */
    public static final int ATTR_HOST_REGISTER_SUPPORTED = 99;
    /** {@code cudaDevAttrHostRegisterReadOnlySupported} (CUDA runtime headers; the driver's attribute 113 too). */
    public static final int ATTR_HOST_REGISTER_READ_ONLY_SUPPORTED = 113;

    /** {@code CUDA_ERROR_INVALID_CONTEXT}: the calling thread has no current context. */
    private static final int INVALID_CONTEXT = 201;

    private final String what;
    private final int device;
    private final long address;
    private final long size;
    private final long deviceDelta;
    private final long[] chunkAddress;
    private final AtomicBoolean closed = new AtomicBoolean();

    private HostRegistration(String what, int device, long address, long size, long deviceDelta, long[] chunkAddress) {
        this.what = what;
        this.device = device;
        this.address = address;
        this.size = size;
        this.deviceDelta = deviceDelta;
        this.chunkAddress = chunkAddress;
    }

    /**
     * What a device can do with host registration.
     *
     * @param supported {@code cudaDevAttrHostRegisterSupported} is 1
     * @param readOnly {@code cudaDevAttrHostRegisterReadOnlySupported} is 1
     * @param reason one line, e.g. "GPU 0 supports read-only host registration"
     */
    public record Support(boolean supported, boolean readOnly, String reason) {
        /** @return true if read-only mappings can be registered (both attributes) */
        public boolean readOnlyRegistration() {
            return supported && readOnly;
        }
    }

    /**
     * Asks the device whether it supports host registration and read-only host registration. Never throws.
     *
     * @param ordinal device ordinal
     * @return both attributes, or "no" with the reason (no GPU, driver without the symbols, a failed query)
     */
    public static Support support(int ordinal) {
        if (!Cuda.availability().available()) {
            return new Support(false, false, "no GPU: " + Cuda.availability().reason());
        }
        if (!Driver.available()) {
            return new Support(false, false, "libcuda.so.1 lacks cuMemHostRegister_v2 or cuDeviceGetAttribute");
        }
        try {
            CudaDevice.makeCurrent(ordinal); // initialises the driver and the primary context
            int reg = Driver.attribute(ATTR_HOST_REGISTER_SUPPORTED, ordinal);
            int ro = Driver.attribute(ATTR_HOST_REGISTER_READ_ONLY_SUPPORTED, ordinal);
            String r = "GPU " + ordinal + (reg != 1 ? " does not support host registration (cudaDevAttrHostRegisterSupported = "
                    + reg + ")" : ro != 1 ? " does not support read-only host registration "
                    + "(cudaDevAttrHostRegisterReadOnlySupported = " + ro + ")" : " supports read-only host registration");
            return new Support(reg == 1, ro == 1, r);
        } catch (RuntimeException e) {
            return new Support(false, false, "GPU " + ordinal + ": host registration support unknown: " + e.getMessage());
        }
    }

    /**
     * @return the calling thread's current device ordinal ({@code cudaGetDevice})
     * @throws CudaException if CUDA is unavailable
     */
    public static int currentDevice() {
        Cuda.ensure();
        int[] d = {0};
        Cuda.check(jcuda.runtime.JCuda.cudaGetDevice(d), "cudaGetDevice");
        return d[0];
    }

    /**
     * Registers {@code [address, address + size)} in calls of at most {@link #MAX_BYTES_PER_CALL} bytes; on a failure
     * the pieces already registered are unregistered again.
     *
     * @param address first byte (page aligned: a mapping's address)
     * @param size bytes, &gt; 0
     * @param flags {@link #PORTABLE}, {@link #MAPPED}, {@link #READ_ONLY} as wanted
     * @param what the memory, for messages, e.g. the file mapped there
     * @return the registration, owned by the caller
     * @throws IOException naming {@code what}, the range and the CUDA error name if the driver refuses
     */
    public static HostRegistration register(long address, long size, int flags, String what) throws IOException {
        Cuda.ensure();
        if (!Driver.available()) {
            throw new IOException(what + ": host registration unavailable: libcuda.so.1 lacks cuMemHostRegister_v2");
        }
        if (size <= 0) {
            throw new IllegalArgumentException(what + ": cannot register " + size + " bytes");
        }
        int n = Math.toIntExact((size + MAX_BYTES_PER_CALL - 1) / MAX_BYTES_PER_CALL);
        long[] chunks = new long[n];
        int done = 0;
        long delta = 0;
        try {
            for (int i = 0; i < n; i++) {
                long a = address + i * MAX_BYTES_PER_CALL;
                long len = Math.min(MAX_BYTES_PER_CALL, size - i * MAX_BYTES_PER_CALL);
                int rc = Driver.register(a, len, flags);
                if (rc != 0) {
                    throw new IOException(what + ": cudaHostRegister(" + len + " bytes at offset " + (a - address)
                            + ", flags 0x" + Integer.toHexString(flags) + ") failed: " + Driver.errorName(rc));
                }
                chunks[done++] = a;
                long d = Driver.devicePointer(a);
                if (d == 0) {
                    throw new IOException(what + ": cudaHostGetDevicePointer failed for the registered range at offset "
                            + (a - address) + " (registered without the mapped flag?)");
                }
                if (i == 0) {
                    delta = d - a;
                } else if (d - a != delta) {
                    throw new IOException(what + ": the device addresses of its " + n + " registrations are not at one "
                            + "distance from the host addresses (no unified addressing?)");
                }
            }
            return new HostRegistration(what, currentDevice(), address, size, delta, chunks);
        } catch (IOException | RuntimeException e) {
            for (int i = done - 1; i >= 0; i--) {
                Driver.unregister(chunks[i]);
            }
            clearRuntimeError();
            throw e;
        }
    }

    private static void clearRuntimeError() {
        jcuda.runtime.JCuda.cudaGetLastError();
    }

    /** @return the first registered host byte's address */
    public long hostAddress() {
        return address;
    }

    /** @return bytes registered */
    public long size() {
        return size;
    }

    /** @return calls it took ({@code ceil(size / MAX_BYTES_PER_CALL)}) */
    public int calls() {
        return chunkAddress.length;
    }

    /**
     * @param offset byte offset in the registered range
     * @return the device address kernels read that byte at ({@code cudaHostGetDevicePointer}'s, plus the offset)
     * @throws IndexOutOfBoundsException if the offset is outside the range
     */
    public long deviceAddress(long offset) {
        if (offset < 0 || offset > size) {
            throw new IndexOutOfBoundsException(what + ": offset " + offset + " outside the " + size + " registered bytes");
        }
        return address + deviceDelta + offset;
    }

    /**
     * Unregisters every piece, once; later calls do nothing.
     *
     * @throws IllegalStateException naming the memory and the CUDA error of the first piece that failed (all are tried)
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        int first = 0;
        for (int i = chunkAddress.length - 1; i >= 0; i--) {
            int rc = Driver.unregister(chunkAddress[i]);
            if (rc == INVALID_CONTEXT) {
                // closed from a thread that never used the GPU: give it the device's primary context, then retry
                CudaDevice.makeCurrent(device);
                rc = Driver.unregister(chunkAddress[i]);
            }
            first = first == 0 ? rc : first;
        }
        if (first != 0) {
            clearRuntimeError();
            throw new IllegalStateException(what + ": cudaHostUnregister failed: " + Driver.errorName(first));
        }
    }

    @Override
    public String toString() {
        return "host registration of " + what + " (" + size + " bytes, " + calls() + " call(s))";
    }

    /** The driver functions, bound once; absent where {@code libcuda.so.1} is not there. */
    static final class Driver {
        private static final MethodHandle REGISTER;
        private static final MethodHandle UNREGISTER;
        private static final MethodHandle DEVICE_POINTER;
        private static final MethodHandle ATTRIBUTE;
        private static final MethodHandle DEVICE_GET;
        private static final MethodHandle ERROR_NAME;

        static {
            MethodHandle[] h = new MethodHandle[6];
            try {
                SymbolLookup lib = SymbolLookup.libraryLookup("libcuda.so.1", Arena.global());
                Linker l = Linker.nativeLinker();
                ValueLayout.OfLong sz = ValueLayout.JAVA_LONG;
                ValueLayout.OfInt i = ValueLayout.JAVA_INT;
                h[0] = lib.find("cuMemHostRegister_v2").map(a -> l.downcallHandle(a, FunctionDescriptor.of(i, sz, sz, i))).orElse(null);
                h[1] = lib.find("cuMemHostUnregister").map(a -> l.downcallHandle(a, FunctionDescriptor.of(i, sz))).orElse(null);
                h[2] = lib.find("cuMemHostGetDevicePointer_v2")
                        .map(a -> l.downcallHandle(a, FunctionDescriptor.of(i, ValueLayout.ADDRESS, sz, i))).orElse(null);
                h[3] = lib.find("cuDeviceGetAttribute")
                        .map(a -> l.downcallHandle(a, FunctionDescriptor.of(i, ValueLayout.ADDRESS, i, i))).orElse(null);
                h[4] = lib.find("cuDeviceGet").map(a -> l.downcallHandle(a, FunctionDescriptor.of(i, ValueLayout.ADDRESS, i))).orElse(null);
                h[5] = lib.find("cuGetErrorName")
                        .map(a -> l.downcallHandle(a, FunctionDescriptor.of(i, i, ValueLayout.ADDRESS))).orElse(null);
            } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
                java.util.Arrays.fill(h, null);
            }
            REGISTER = h[0];
            UNREGISTER = h[1];
            DEVICE_POINTER = h[2];
            ATTRIBUTE = h[3];
            DEVICE_GET = h[4];
            ERROR_NAME = h[5];
        }

        static boolean available() {
            return REGISTER != null && UNREGISTER != null && DEVICE_POINTER != null && ATTRIBUTE != null && DEVICE_GET != null;
        }

        static int register(long address, long size, int flags) {
            try {
                return (int) REGISTER.invokeExact(address, size, flags);
            } catch (Throwable t) {
                throw new IllegalStateException("cuMemHostRegister_v2 failed: " + t, t);
            }
        }

        static int unregister(long address) {
            try {
                return (int) UNREGISTER.invokeExact(address);
            } catch (Throwable t) {
                throw new IllegalStateException("cuMemHostUnregister failed: " + t, t);
            }
        }

        /** @return the device address of registered host memory at {@code address}, or 0 if the driver refused */
        static long devicePointer(long address) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment out = a.allocate(ValueLayout.JAVA_LONG);
                int rc = (int) DEVICE_POINTER.invokeExact(out, address, 0);
                return rc == 0 ? out.get(ValueLayout.JAVA_LONG, 0) : 0;
            } catch (Throwable t) {
                throw new IllegalStateException("cuMemHostGetDevicePointer_v2 failed: " + t, t);
            }
        }

        static int attribute(int attribute, int ordinal) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment dev = a.allocate(ValueLayout.JAVA_INT);
                int rc = (int) DEVICE_GET.invokeExact(dev, ordinal);
                if (rc != 0) {
                    throw new CudaException("cuDeviceGet(" + ordinal + ")", rc, errorName(rc));
                }
                MemorySegment out = a.allocate(ValueLayout.JAVA_INT);
                rc = (int) ATTRIBUTE.invokeExact(out, attribute, dev.get(ValueLayout.JAVA_INT, 0));
                if (rc != 0) {
                    throw new CudaException("cuDeviceGetAttribute(" + attribute + ", GPU " + ordinal + ")", rc, errorName(rc));
                }
                return out.get(ValueLayout.JAVA_INT, 0);
            } catch (CudaException e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("cuDeviceGetAttribute failed: " + t, t);
            }
        }

        static String errorName(int rc) {
            if (ERROR_NAME == null) {
                return "CUresult " + rc;
            }
            try (Arena a = Arena.ofConfined()) {
                MemorySegment out = a.allocate(ValueLayout.ADDRESS);
                int r = (int) ERROR_NAME.invokeExact(rc, out);
                if (r != 0) {
                    return "CUresult " + rc;
                }
                return out.get(ValueLayout.ADDRESS, 0).reinterpret(256).getString(0) + " (" + rc + ")";
            } catch (Throwable t) {
                return "CUresult " + rc;
            }
        }
    }
}
