package dev.gdsloader.service;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The wire protocol of the prefetch service.
 *
 * <p>A frame is {@code [int32 length][int32 headerLength][header: UTF-8 JSON][payload: raw bytes]}, big-endian,
 * where {@code length} counts everything after itself. The header is an object
 * {@code {"version": 2, "type": "...", "body": {...}}}; the payload is empty except in host-delivered
 * {@code BATCH} frames, where it holds the batch's columns back to back, in the order the header lists them.
 *
 * <p>Conversation: the client sends {@code OPEN} and gets {@code OPENED} or {@code ERROR}. The body of
 * {@code OPEN} is {@code {"dataset": "train", "options": {...}, "delivery": "HOST", "clientHasGpu": false}}, where
 * {@code options} is the session loader's {@link dev.gdsloader.loader.LoaderOptions} in its own JSON (the same
 * object a saved state's sampler and the builder use; absent fields take the defaults, unknown ones are refused
 * by name), e.g. {@code {"batchSize": 256, "sampler": {"shuffle": "GLOBAL", "seed": 42, "rank": 1, "worldSize": 2}}};
 * then, one at a time, {@code NEXT}, answered by {@code BATCH} or, after an epoch's last batch, {@code END} (the
 * next {@code NEXT} starts the next epoch). In GPU delivery the client sends {@code RELEASE} with the batch's id
 * once its stream is done with the memory; the server reuses the slot only after that. Any request may be
 * answered by {@code ERROR} naming what was wrong; the server stays up, and the connection stays usable unless
 * the error says otherwise. Constants only; thread-safe.
 */
public final class Protocol {
    /**
     * The protocol version this build speaks; a peer with another version is refused, naming both (the server
     * answers such a frame with a fatal {@code ERROR}; the client refuses any reply but {@code ERROR} of another
     * version). Version 2: {@code OPEN} carries the loader options as one {@code options} object (version 1
     * listed a subset of them flat in the body).
     */
    public static final int VERSION = 2;
    /** Largest frame accepted, bytes after the length field (1 GiB + 1 MiB of header). */
    public static final int MAX_FRAME_BYTES = (1 << 30) + (1 << 20);
    /** Largest JSON header accepted, bytes. */
    public static final int MAX_HEADER_BYTES = 1 << 24;

    /** Client to server: open a session. */
    public static final String OPEN = "OPEN";
    /** Server to client: the session is open. */
    public static final String OPENED = "OPENED";
    /** Client to server: send the next batch. */
    public static final String NEXT = "NEXT";
    /** Server to client: one batch. */
    public static final String BATCH = "BATCH";
    /** Server to client: the epoch has no more batches. */
    public static final String END = "END";
    /** Client to server: a GPU-delivered batch may be reused. */
    public static final String RELEASE = "RELEASE";
    /** Server to client: what was wrong with the last request. */
    public static final String ERROR = "ERROR";

    static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private Protocol() {
    }
}
