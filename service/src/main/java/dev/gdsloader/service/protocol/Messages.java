package dev.gdsloader.service.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The JSON messages of a stream's {@code app_metadata} that both sides write (service/README.md): the CUDA_IPC
 * exchange's end message (server), release and next messages (client), and the UTF-8 buffer a message travels in.
 * Stateless; thread-safe.
 */
public final class Messages {
    /** CUDA_IPC release message key: {@code {"release": ID}}, a client done with the batch of that id. */
    public static final String RELEASE_KEY = "release";
    /**
     * CUDA_IPC release message key, optional: {@code {"release": ID, "event": HANDLE}}, the base64 handle of the client's
     * interprocess event recorded after its work on the batch; the server reuses the slot only after that event.
     */
    public static final String EVENT_KEY = "event";

    private Messages() {
    }

    /**
     * @param epoch the epoch that ended
     * @param batches batches the exchange sent in it
     * @return the end message {@code {"end": true, "epoch": E, "batches": N}}
     */
    public static String end(long epoch, long batches) {
        ObjectNode n = Protocol.JSON.createObjectNode();
        n.put(Protocol.END_KEY, true);
        n.put("epoch", epoch);
        n.put("batches", batches);
        return n.toString();
    }

    /**
     * @param id the batch's {@code "id"}
     * @param event the base64 handle of the client's interprocess event recorded after its work on the batch, or null
     *     (the work is done)
     * @return the release message {@code {"release": ID}} or {@code {"release": ID, "event": HANDLE}}
     */
    public static String release(long id, String event) {
        return event == null ? "{\"" + RELEASE_KEY + "\":" + id + "}"
                : "{\"" + RELEASE_KEY + "\":" + id + ",\"" + EVENT_KEY + "\":\"" + event + "\"}";
    }

    /**
     * @param epoch the epoch asked for
     * @return the continue message {@code {"next": E}}
     */
    public static String next(long epoch) {
        return "{\"" + Protocol.NEXT_KEY + "\":" + epoch + "}";
    }

    /**
     * @param s JSON this process wrote (a loader state)
     * @return it as a tree
     * @throws IllegalStateException if it is not JSON (a bug)
     */
    public static JsonNode tree(String s) {
        try {
            return Protocol.JSON.readTree(s);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("did not read back as JSON: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * @param a the allocator
     * @param s a message
     * @return a buffer of {@code a} holding {@code s} as UTF-8; owned by the caller (Flight, once sent)
     */
    public static ArrowBuf utf8(BufferAllocator a, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        ArrowBuf buf = a.buffer(bytes.length);
        buf.setBytes(0, bytes);
        buf.writerIndex(bytes.length);
        return buf;
    }
}
