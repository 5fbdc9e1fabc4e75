package dev.gdsloader.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import io.netty.buffer.Unpooled;

/**
 * One protocol frame: a header ({@code version}, {@code type}, {@code body}) and a payload. Reference-counted
 * through its payload ({@link io.netty.buffer.ByteBufHolder}): whoever holds a frame releases it once.
 */
final class Frame extends DefaultByteBufHolder {
    private final int version;
    private final String type;
    private final JsonNode body;

    Frame(int version, String type, JsonNode body, ByteBuf payload) {
        super(payload);
        this.version = version;
        this.type = type;
        this.body = body;
    }

    /** @return a frame of this build's version with an empty payload */
    static Frame of(String type, Object body) {
        return new Frame(Protocol.VERSION, type, Protocol.JSON.valueToTree(body), Unpooled.EMPTY_BUFFER);
    }

    /** @return a frame of this build's version carrying {@code payload} (ownership passes to the frame) */
    static Frame of(String type, Object body, ByteBuf payload) {
        return new Frame(Protocol.VERSION, type, Protocol.JSON.valueToTree(body), payload);
    }

    int version() {
        return version;
    }

    String type() {
        return type;
    }

    JsonNode body() {
        return body;
    }

    ObjectNode header() {
        ObjectNode h = Protocol.JSON.createObjectNode();
        h.put("version", version);
        h.put("type", type);
        h.set("body", body);
        return h;
    }

    @Override
    public String toString() {
        return type + " " + body + " + " + content().readableBytes() + " payload bytes";
    }
}
