package dev.gdsloader.service.protocol;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The prefetch service's protocol on Arrow Flight, version {@value #VERSION} (service/README.md is the full
 * contract): a request ({@link Request}) is UTF-8 JSON used as a {@code FlightDescriptor} command and as a
 * {@code Ticket}; {@code DoGet} streams one epoch of record batches (host delivery), {@code DoExchange} one epoch of
 * CUDA IPC handles (GPU delivery, same host). Constants only; thread-safe.
 */
public final class Protocol {
    /** The protocol version this build speaks; a request of another version is refused naming both. */
    public static final int VERSION = 4;
    /** Schema metadata key: the protocol version, {@code "4"}. */
    public static final String VERSION_KEY = "gdsloader.version";
    /** Field metadata key: the column's {@code DType} name, e.g. {@code "UINT8"}. */
    public static final String DTYPE_KEY = "gdsloader.dtype";
    /** Field metadata key: the per-record shape as a JSON array, e.g. {@code "[28,28]"}. */
    public static final String SHAPE_KEY = "gdsloader.shape";
    /** Bookkeeping column: the global record index of each row, Int(64, signed). */
    public static final String RECORD_COLUMN = "_record";
    /** Bookkeeping column: true for rows that are padding ({@code Partition.PAD}), Bool. */
    public static final String PADDING_COLUMN = "_padding";
    /**
     * CUDA_IPC end message key: after an epoch's last batch the server sends {@code {"end": true, "batches": N}} as a
     * metadata-only message and keeps the call open until the client half-closes (protocol version 4; service/README.md).
     */
    public static final String END_KEY = "end";
    /**
     * CUDA_IPC continue message key: after an end message the client may send {@code {"next": E+1}} to have the same
     * exchange (session, loader, slot buffers, handles) stream the next epoch (service/README.md).
     */
    public static final String NEXT_KEY = "next";

    /**
     * Strict JSON: unknown properties are refused by name. Shared by both sides and configured once here; callers read
     * and write with it and never reconfigure it.
     */
    public static final ObjectMapper JSON = JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

    private Protocol() {
    }
}
