package dev.gdsloader.service;

/** How a session's batches reach the client. */
public enum Delivery {
    /**
     * The column bytes travel in the frame: copied from the slot's host memory, or downloaded from its device
     * memory first. Works across hosts and without a GPU on the client.
     */
    HOST,
    /**
     * Per column, a CUDA IPC memory handle of the slot's device buffer plus offset and length; the client maps
     * it ({@code cudaIpcOpenMemHandle}) and reads GPU memory in place. Client and server must share the host and
     * the GPU, and be different processes.
     */
    CUDA_IPC,
    /** {@link #CUDA_IPC} when the client is on loopback, has a GPU and the loader reads into device memory; else {@link #HOST}. */
    AUTO
}
