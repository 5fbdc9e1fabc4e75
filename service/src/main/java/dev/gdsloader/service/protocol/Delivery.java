package dev.gdsloader.service.protocol;

/** How a session's batches reach the client ({@code "delivery"} of a {@link Request}). */
public enum Delivery {
    /**
     * {@code DoGet}: the column bytes travel as Arrow record batches. The server's loader reads through host memory
     * (path HOST), never through the GPU and back. Works across hosts and without a GPU on the client.
     */
    HOST,
    /**
     * {@code DoExchange}: per column, a CUDA IPC memory handle of the slot's device buffer plus offset and length;
     * the client maps it ({@code cudaIpcOpenMemHandle}) and reads GPU memory in place, then sends a release. Client
     * and server must share the host and the GPU, and be different processes.
     */
    CUDA_IPC
}
