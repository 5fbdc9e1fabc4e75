package dev.gdsloader.service.client;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.formats.DType;
import java.nio.ByteBuffer;
import java.util.Arrays;
import jcuda.Pointer;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaMemcpyKind;

/**
 * One column of a {@link RemoteBatch}: a C-order tensor of shape {@link #shape()} (batch dimension first) and
 * element type {@link #dtype()}, {@link #bytes()} long, either in the Arrow record batch the client received
 * (host delivery, {@link #hostBuffer()}) or in the server's GPU memory mapped into this process (CUDA IPC,
 * {@link #devicePointer()}). Valid until its batch is released: every accessor then throws
 * {@link dev.gdsloader.memory.IllegalReferenceCountException}, and a host buffer handed out before throws
 * {@link IllegalStateException} when read. Not thread-safe.
 */
public final class RemoteColumn {
    private final RemoteBatch batch;
    private final String name;
    private final DType dtype;
    private final long[] shape;
    private final long bytes;
    private final ByteBuffer host;
    /** CUDA IPC: the device address of the column's first byte in this process's mapping; 0 for HOST delivery. */
    private final long device;

    private RemoteColumn(RemoteBatch batch, String name, DType dtype, long[] shape, long bytes, ByteBuffer host, long device) {
        this.batch = batch;
        this.name = name;
        this.dtype = dtype;
        this.shape = shape;
        this.bytes = bytes;
        this.host = host;
        this.device = device;
    }

    /**
     * @param host read-only view of the bytes, unreadable once the batch is released (its memory's scope closed)
     * @return a column in host memory
     */
    static RemoteColumn host(RemoteBatch batch, String name, DType dtype, long[] shape, long bytes, ByteBuffer host) {
        return new RemoteColumn(batch, name, dtype, shape, bytes, host, 0);
    }

    /**
     * @param device the device address of the first byte, in this process's mapping of the server's slot buffer
     * @return a column in GPU memory
     */
    static RemoteColumn device(RemoteBatch batch, String name, DType dtype, long[] shape, long bytes, long device) {
        return new RemoteColumn(batch, name, dtype, shape, bytes, null, device);
    }

    /** @return the column name */
    public String name() {
        return name;
    }

    /** @return element type */
    public DType dtype() {
        return dtype;
    }

    /** @return shape, batch dimension first (a copy) */
    public long[] shape() {
        return shape.clone();
    }

    /** @return size in bytes */
    public long bytes() {
        return bytes;
    }

    /** @return true if the data is in GPU memory (CUDA IPC delivery) */
    public boolean onDevice() {
        return host == null;
    }

    /**
     * @return a read-only view of the bytes, valid until the batch is released (reading it after throws
     *     {@link IllegalStateException})
     * @throws dev.gdsloader.memory.IllegalReferenceCountException if the batch was released
     * @throws IllegalStateException if the column is in GPU memory
     */
    public ByteBuffer hostBuffer() {
        batch.ensureAccessible();
        if (host == null) {
            throw new IllegalStateException("column '" + name + "' is in GPU memory (CUDA IPC delivery): use devicePointer()");
        }
        return host.duplicate();
    }

    /**
     * @return the device address of the first byte, in this process's mapping of the server's slot buffer; valid on
     *     the client's current device until the batch is released. Where the batch was not awaited on a stream
     *     ({@link RemoteBatch#awaitOn}), the host first waits until the data is ready.
     * @throws dev.gdsloader.memory.IllegalReferenceCountException if the batch was released
     * @throws IllegalStateException if the column came in host memory (host delivery)
     */
    public long devicePointer() {
        batch.ensureAccessible();
        if (host != null) {
            throw new IllegalStateException("column '" + name + "' came in host memory (HOST delivery): use hostBuffer()");
        }
        batch.awaitReadyOnHost();
        return device;
    }

    /**
     * Copies the column's bytes into a new array: from the record batch, or from GPU memory with a synchronous
     * {@code cudaMemcpy} (device to host) once the host waited for the server's ready event.
     *
     * @return the bytes
     * @throws dev.gdsloader.memory.IllegalReferenceCountException if the batch was released
     * @throws IllegalStateException if the column is larger than an array holds
     * @throws dev.gdsloader.cuda.CudaException if the copy fails
     */
    public byte[] toByteArray() {
        batch.ensureAccessible();
        if (bytes > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("column '" + name + "' has " + bytes + " bytes, more than a Java array holds");
        }
        byte[] out = new byte[(int) bytes];
        if (host != null) {
            host.duplicate().get(out);
        } else if (bytes > 0) {
            batch.synchronizeReady(); // the copy is not ordered on any consumer stream
            Cuda.check(JCuda.cudaMemcpy(Pointer.to(out), new DeviceAddress(device), bytes,
                    cudaMemcpyKind.cudaMemcpyDeviceToHost), "cudaMemcpy of column '" + name + "' from the IPC mapping");
        }
        return out;
    }

    @Override
    public String toString() {
        return name + ": " + dtype + Arrays.toString(shape) + ", " + bytes + " bytes" + (onDevice() ? " on GPU (CUDA IPC)" : " on host");
    }

    /** A JCuda pointer to a raw device address (JCuda's own constructor for subclasses), owning nothing. */
    private static final class DeviceAddress extends Pointer {
        DeviceAddress(long address) {
            super(address);
        }
    }
}
