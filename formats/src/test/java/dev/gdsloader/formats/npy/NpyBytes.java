package dev.gdsloader.formats.npy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds {@code .npy} files byte by byte, independently of the code under test. */
final class NpyBytes {

    private NpyBytes() {
    }

    /**
     * Builds a file: magic, version, length field, {@code header} bytes as given (they must
     * include their own padding and newline), then {@code data}.
     */
    static byte[] file(int major, int minor, byte[] header, byte[] data) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', (byte) major, (byte) minor});
        ByteBuffer len = ByteBuffer.allocate(major == 1 ? 2 : 4).order(ByteOrder.LITTLE_ENDIAN);
        if (major == 1) {
            len.putShort((short) header.length);
        } else {
            len.putInt(header.length);
        }
        out.writeBytes(len.array());
        out.writeBytes(header);
        out.writeBytes(data);
        return out.toByteArray();
    }

    /** Pads {@code dict} with spaces and a final newline so that the data starts at {@code dataOffset}. */
    static byte[] padded(String dict, int prefixLength, int dataOffset, boolean utf8) {
        byte[] text = dict.getBytes(utf8 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
        int pad = dataOffset - prefixLength - text.length - 1;
        if (pad < 0) {
            throw new IllegalArgumentException("dict too long for data offset " + dataOffset);
        }
        byte[] header = new byte[dataOffset - prefixLength];
        System.arraycopy(text, 0, header, 0, text.length);
        java.util.Arrays.fill(header, text.length, header.length - 1, (byte) ' ');
        header[header.length - 1] = '\n';
        return header;
    }

    /** A version 1.0 file with the given dict padded to a 64-byte data offset. */
    static byte[] v1(String dict, byte[] data) {
        int offset = (10 + dict.length() + 1 + 63) / 64 * 64;
        return file(1, 0, padded(dict, 10, offset, false), data);
    }

    static Path write(Path dir, String name, byte[] bytes) throws IOException {
        return Files.write(dir.resolve(name), bytes);
    }
}
