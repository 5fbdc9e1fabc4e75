package dev.gdsloader.formats.safetensors;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Hand-written safetensors files for tests. */
final class StBytes {

    private StBytes() {
    }

    /** Length field + header text (not padded) + {@code dataBytes} bytes of pattern. */
    static byte[] file(String headerJson, int dataBytes) {
        return file(headerJson.getBytes(StandardCharsets.UTF_8), dataBytes);
    }

    static byte[] file(byte[] header, int dataBytes) {
        ByteBuffer b = ByteBuffer.allocate(8 + header.length + dataBytes)
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(header.length).put(header);
        for (int i = 0; i < dataBytes; i++) {
            b.put((byte) (i * 7 + 1));
        }
        return b.array();
    }

    static Path write(Path dir, String name, String headerJson, int dataBytes)
            throws IOException {
        Path f = dir.resolve(name);
        Files.write(f, file(headerJson, dataBytes));
        return f;
    }
}
