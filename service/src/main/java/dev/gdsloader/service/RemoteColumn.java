package dev.gdsloader.service;

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
 * {@link #devicePointer()}). Valid until its batch is closed or released. Not thread-safe.
 */
public final class RemoteColumn {
    private final RemoteBatch batch;
    private final String name;
    private final DType dtype;
    private final long[] shape;
    private final long bytes;
    private final ByteBuffer host;
    private final CudaIpc.DevicePointer mapping;
    private final long offset;

    RemoteColumn(RemoteBatch batch, String name, DType dtype, long[] shape, long bytes, ByteBuffer host,
                 CudaIpc.DevicePointer mapping, long offset) {
        this.batch = batch;
        this.name = name;
        this.dtype = dtype;
        this.shape = shape;
        this.bytes = bytes;
        this.host = host;
        this.mapping = mapping;
        this.offset = offset;
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
     * @return a read-only view of the bytes, valid until the batch is closed
     * @throws IllegalStateException if the batch was closed, or the column is in GPU memory
     */
    public ByteBuffer hostBuffer() {
        batch.checkOpen();
        if (host == null) {
            throw new IllegalStateException("column '" + name + "' is in GPU memory (CUDA IPC delivery): use devicePointer()");
        }
        return host.duplicate();
    }

    /**
     * @return the device address of the first byte, in this process's mapping of the server's slot buffer;
     *     valid on the client's current device until the batch is released
     * @throws IllegalStateException if the batch was closed, or the column came in host memory (host delivery)
     */
    public long devicePointer() {
        batch.checkOpen();
        if (host != null) {
            throw new IllegalStateException("column '" + name + "' came in host memory (HOST delivery): use hostBuffer()");
        }
        return mapping.address() + offset;
    }

    /**
     * Copies the column's bytes into a new array: from the record batch, or from GPU memory with a synchronous
     * {@code cudaMemcpy} (device to host).
     *
     * @return the bytes
     * @throws IllegalStateException if the batch was closed or the column is larger than an array holds
     * @throws dev.gdsloader.cuda.CudaException if the copy fails
     */
    public byte[] toByteArray() {
        batch.checkOpen();
        if (bytes > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("column '" + name + "' has " + bytes + " bytes, more than a Java array holds");
        }
        byte[] out = new byte[(int) bytes];
        if (host != null) {
            host.duplicate().get(out);
        } else if (bytes > 0) {
            Cuda.check(JCuda.cudaMemcpy(Pointer.to(out), mapping.withByteOffset(offset), bytes,
                    cudaMemcpyKind.cudaMemcpyDeviceToHost), "cudaMemcpy of column '" + name + "' from the IPC mapping");
        }
        return out;
    }

    @Override
    public String toString() {
        return name + ": " + dtype + Arrays.toString(shape) + ", " + bytes + " bytes" + (onDevice() ? " on GPU (CUDA IPC)" : " on host");
    }
}
