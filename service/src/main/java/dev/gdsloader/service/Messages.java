package dev.gdsloader.service;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.loader.LoaderOptions;
import java.util.List;

/** The bodies of the protocol's messages (see {@link Protocol}), as Jackson maps them. Immutable. */
final class Messages {
    private Messages() {
    }

    /**
     * {@code OPEN}.
     *
     * @param dataset dataset directory, relative to the server's dataset root
     * @param options the session loader's options as {@link LoaderOptions#toJson()} writes them; absent fields
     *     (or an absent object) take {@link LoaderOptions#defaults()}, and {@code batchSize} must be given
     * @param delivery {@link Delivery} name
     * @param clientHasGpu whether the client can open CUDA IPC handles (for {@link Delivery#AUTO})
     */
    record Open(String dataset, JsonNode options, String delivery, boolean clientHasGpu) {
        /** @return {@code o} as the JSON tree this message carries */
        static JsonNode options(LoaderOptions o) {
            try {
                return Protocol.JSON.readTree(o.toJson());
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("loader options did not read back as JSON: " + e.getOriginalMessage(), e);
            }
        }

        /**
         * @return the loader options this message carries
         * @throws IllegalArgumentException naming the option that is unknown, of the wrong type or invalid
         */
        LoaderOptions loaderOptions() {
            return LoaderOptions.fromJson(options == null || options.isNull() ? "{}" : options.toString());
        }
    }

    /**
     * {@code OPENED}.
     *
     * @param session session id, for logs
     * @param delivery the delivery chosen ({@code HOST} or {@code CUDA_IPC})
     * @param pathTaken the loader's path
     * @param pathReason why it took that path
     * @param batchesPerEpoch batches per epoch on this rank
     * @param slots slots in the server's ring
     */
    record Opened(String session, String delivery, String pathTaken, String pathReason, int batchesPerEpoch, int slots) {
    }

    /** {@code NEXT}: no fields. */
    record Next() {
    }

    /**
     * One column of a {@code BATCH}.
     *
     * @param name column name
     * @param dtype {@code DType} name
     * @param shape shape, batch dimension first
     * @param bytes bytes of the column
     * @param offset host delivery: offset in the frame's payload; CUDA IPC: offset in the IPC allocation
     * @param ipcHandle CUDA IPC: the 64-byte {@code cudaIpcMemHandle_t} of the slot buffer, base64; else null
     * @param device CUDA IPC: the server's device ordinal; else -1
     */
    record Column(String name, String dtype, long[] shape, long bytes, long offset, String ipcHandle, int device) {
    }

    /**
     * {@code BATCH}.
     *
     * @param id the batch's id within the session (for {@code RELEASE})
     * @param epoch epoch, from 0
     * @param index batch index within the epoch, from 0
     * @param recordIndices global record indices, in order
     * @param padding how many trailing samples are padding ({@code Partition.PAD})
     * @param columns the columns, in dataset order
     */
    record BatchHeader(long id, long epoch, long index, long[] recordIndices, int padding, List<Column> columns) {
    }

    /**
     * {@code END}.
     *
     * @param epoch the epoch that ended
     * @param batches batches it had
     */
    record End(long epoch, long batches) {
    }

    /**
     * {@code RELEASE}.
     *
     * @param id the batch's id
     */
    record Release(long id) {
    }

    /**
     * {@code ERROR}.
     *
     * @param message what was wrong, naming the option or dataset
     * @param fatal true if the server closes the connection after it
     */
    record Error(String message, boolean fatal) {
    }
}
