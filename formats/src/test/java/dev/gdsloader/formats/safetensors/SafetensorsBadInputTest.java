package dev.gdsloader.formats.safetensors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Damaged or hostile safetensors files give a FormatException, never anything else. */
class SafetensorsBadInputTest {

    @TempDir
    Path dir;

    private FormatException refused(String header, int dataBytes) throws IOException {
        Path f = StBytes.write(dir, "bad.safetensors", header, dataBytes);
        FormatException e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
        assertEquals(f, e.file());
        assertTrue(e.getMessage().startsWith(f.toString()), e.getMessage());
        return e;
    }

    private static void contains(FormatException e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), "missing '" + p + "' in: " + e.getMessage());
        }
    }

    private static String entry(String name, String dtype, String shape, String offsets) {
        return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape
                + ",\"data_offsets\":" + offsets + "}";
    }

    @Test
    void hugeHeaderLengthIsRefusedBeforeAllocating() throws IOException {
        Path f = dir.resolve("huge.safetensors");
        ByteBuffer b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0xFFFFFFFFFFFFFFF0L).putLong(0);
        Files.write(f, b.array());
        FormatException e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
        assertEquals(0, e.offset());
        contains(e, "18446744073709551600", "16-byte file", "at most 8 bytes");
    }

    @Test
    void headerLengthAboveTheCapIsRefused() throws IOException {
        String header = "{" + entry("a", "U8", "[4]", "[0,4]") + "}";
        Path f = StBytes.write(dir, "cap.safetensors", header, 4);
        FormatException e = assertThrows(FormatException.class,
                () -> SafetensorsFile.open(f, 10));
        assertEquals(0, e.offset());
        contains(e, "cap of 10 bytes", "header length " + header.length());
        assertEquals(1, SafetensorsFile.open(f, header.length()).tensors().size());
        assertThrows(IllegalArgumentException.class, () -> SafetensorsFile.open(f, -1));
    }

    @Test
    void headerLengthPastTheFileIsRefused() throws IOException {
        byte[] good = StBytes.file("{}", 0);
        ByteBuffer.wrap(good).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 3);
        Path f = dir.resolve("past.safetensors");
        Files.write(f, good);
        FormatException e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
        contains(e, "header length 3", "at most 2 bytes", "10-byte file");
    }

    @Test
    void overlappingTensorsAreNamed() throws IOException {
        FormatException e = refused("{" + entry("first", "U8", "[16]", "[0,16]") + ","
                + entry("second", "U8", "[16]", "[8,24]") + "}", 24);
        contains(e, "'first' at data_offsets [0, 16]", "'second' at data_offsets [8, 24]",
                "overlap");
        // Containment is overlap too, whatever the order in the header.
        e = refused("{" + entry("inner", "U8", "[2]", "[4,6]") + ","
                + entry("outer", "U8", "[16]", "[0,16]") + "}", 16);
        contains(e, "'outer'", "'inner'");
        e = refused("{" + entry("a", "U8", "[8]", "[0,8]") + "," + entry("b", "U8", "[2]", "[8,10]")
                + "," + entry("c", "U8", "[16]", "[2,18]") + "}", 18);
        contains(e, "'a'", "'c'");
    }

    @Test
    void beginAfterEndIsRefused() throws IOException {
        FormatException e = refused("{" + entry("x", "U8", "[0]", "[32,16]") + "}", 32);
        contains(e, "tensor 'x'", "begin <= end", "[32, 16]");
    }

    @Test
    void sizeMismatchNamesTensorOffsetsAndBothCounts() throws IOException {
        FormatException e = refused("{" + entry("w", "F32", "[2,2]", "[24,36]") + "}", 64);
        contains(e, "tensor 'w'", "F32", "(2, 2)", "2 x 2 x 4 = 16 bytes", "[24, 36]",
                "span 12 bytes");
    }

    @Test
    void offsetsPastTheDataSectionAreRefused() throws IOException {
        String header = "{" + entry("w", "F32", "[4]", "[0,16]") + "}";
        FormatException e = refused(header, 12);
        contains(e, "tensor 'w'", "12-byte data section", "[0, 16]",
                "file offset " + (8 + header.length() + 16));
        e = refused("{" + entry("w", "U8", "[1]", "[9223372036854775806,9223372036854775807]")
                + "}", 4);
        contains(e, "beyond " + Long.MAX_VALUE);
    }

    @Test
    void shapeOverflowIsRefused() throws IOException {
        FormatException e = refused("{" + entry("big", "F64", "[4611686018427387904,4]", "[0,8]")
                + "}", 8);
        contains(e, "tensor 'big'", "signed 64-bit", "4611686018427387904 x 4 x 8");
        e = refused("{" + entry("big", "U8", "[9223372036854775808]", "[0,8]") + "}", 8);
        contains(e, "\"shape\" entry 0", "9223372036854775808");
        // Zero dimensions do not hide an overflow of the others, as in NumPy.
        refused("{" + entry("z", "U8", "[0,4294967296,4294967296]", "[0,0]") + "}", 0);
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
        "F128;unknown dtype 'F128'",
        "C64;unknown dtype 'C64'",
        "f32;unknown dtype 'f32'",
        "F8_E8M0;unknown dtype 'F8_E8M0'"})
    void unknownDtypeIsRefused(String dtype, String text) throws IOException {
        FormatException e = refused("{" + entry("t", dtype, "[1]", "[0,1]") + "}", 4);
        contains(e, text, "tensor 't'", "F8_E4M3");
        // the dtype's own refusal is carried as its detail, not its whole message: one file and offset in the message
        assertEquals(e.getMessage().indexOf(": at byte offset "), e.getMessage().lastIndexOf(": at byte offset "), e.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', quoteCharacter = '`', value = {
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"extra\":1}};unknown key \"extra\"",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[1]}};\"data_offsets\" key",
        "{\"t\":{\"shape\":[1],\"data_offsets\":[0,1]}};\"dtype\" key",
        "{\"t\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}};\"shape\" key",
        "{\"t\":[1,2]};tensor 't' to be a JSON object",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,1]}};non-negative integer",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[1.0],\"data_offsets\":[0,1]}};the number 1.0",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[\"1\"],\"data_offsets\":[0,1]}};the string \"1\"",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":1,\"data_offsets\":[0,1]}};array of integers",
        "{\"t\":{\"dtype\":1,\"shape\":[1],\"data_offsets\":[0,1]}};to be a string",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}};array of two integers",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[-1,0]}};data_offsets begin",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":{}}};array of two integers",
        "{\"__metadata__\":{\"k\":1}};values to be strings",
        "{\"__metadata__\":[\"k\"]};object of strings",
        "{\"__metadata__\":null};object of strings",
        "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}};Duplicate",
        "{} x;malformed JSON",
        "{}{};only whitespace after the JSON object",
        "{\"t\":};malformed JSON",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]};malformed JSON",
        "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},};malformed JSON",
        "{'t':1};malformed JSON",
        "{\"\\ud800\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}};surrogate",
        "{\"__metadata__\":{\"k\":\"a\\udc00b\"}};surrogate",
        "` {}`;starting with '{'",
        "[];starting with '{'"})
    void malformedHeadersAreRefused(String header, String text) throws IOException {
        contains(refused(header, 4), text);
    }

    @Test
    void invalidUtf8AndEmptyHeaderAreRefused() throws IOException {
        byte[] header = "{\"x\u00ff\":1}".getBytes(StandardCharsets.ISO_8859_1);
        Path f = dir.resolve("utf8.safetensors");
        Files.write(f, StBytes.file(header, 0));
        FormatException e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
        assertEquals(8 + 3, e.offset());
        contains(e, "valid UTF-8", "0xff");
        // An overlong encoding of '"' (0xC0 0xA2) and an encoded surrogate (ED A0 80).
        for (byte[] bad : new byte[][] {{'{', (byte) 0xC0, (byte) 0xA2, '}'},
            {'{', '"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"', ':', '1', '}'}}) {
            Files.write(f, StBytes.file(bad, 0));
            assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
        }
        Files.write(f, StBytes.file(new byte[0], 0));
        e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
        contains(e, "empty header");
        for (int len = 0; len < 8; len++) {
            Files.write(f, new byte[len]);
            e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f));
            assertEquals(0, e.offset());
            contains(e, "8-byte little-endian header length", "only " + len + " bytes");
        }
    }

    @Test
    void deepNestingIsAFormatException() throws IOException {
        String header = "{\"__metadata__\":" + "[".repeat(5000) + "]".repeat(5000) + "}";
        contains(refused(header, 0), "malformed JSON");
    }

    private byte[] validFile() throws IOException {
        Map<String, TensorData> in = new LinkedHashMap<>();
        in.put("weight", new TensorData(DType.FLOAT32, new long[] {2, 3}, new byte[24]));
        in.put("bias", new TensorData(DType.BFLOAT16, new long[] {3}, new byte[] {1, 2, 3, 4, 5, 6}));
        in.put("scale", new TensorData(DType.FLOAT8_E4M3, new long[] {}, new byte[] {7}));
        Path f = dir.resolve("valid.safetensors");
        SafetensorsWriter.write(f, in, Map.of("format", "pt"));
        return Files.readAllBytes(f);
    }

    @Test
    void everyTruncationIsAFormatException() throws IOException {
        byte[] full = validFile();
        Path f = dir.resolve("t.safetensors");
        for (int len = 0; len < full.length; len++) {
            Files.write(f, Arrays.copyOf(full, len));
            int n = len;
            FormatException e = assertThrows(FormatException.class, () -> SafetensorsFile.open(f),
                    "truncated to " + n + " bytes");
            assertTrue(e.offset() >= 0 && e.offset() <= full.length,
                    "offset " + e.offset() + ": " + e.getMessage());
        }
        Files.write(f, full);
        assertEquals(3, SafetensorsFile.open(f).tensors().size());
    }

    @Test
    void randomHeaderByteFlipsGiveFormatExceptionOrSuccess() throws IOException {
        byte[] base = validFile();
        int headerEnd = 8 + (int) ByteBuffer.wrap(base).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        Random random = new Random(20250611L);
        Path f = dir.resolve("flip.safetensors");
        int refused = 0;
        int accepted = 0;
        String alphabet = "{}[],:\" 0123456789-eE.FUIB_81632tfnul\\x";
        for (int iteration = 0; iteration < 2000; iteration++) {
            byte[] bytes = base.clone();
            int flips = 1 + random.nextInt(3);
            for (int k = 0; k < flips; k++) {
                int at = random.nextInt(headerEnd); // the length field and the JSON
                bytes[at] = switch (random.nextInt(4)) {
                    case 0 -> (byte) random.nextInt(256);
                    case 1 -> (byte) (bytes[at] ^ (1 << random.nextInt(8)));
                    case 2 -> (byte) alphabet.charAt(random.nextInt(alphabet.length()));
                    default -> (byte) (bytes[at] + 1);
                };
            }
            Files.write(f, bytes);
            try {
                SafetensorsFile st = SafetensorsFile.open(f);
                for (Tensor t : st.tensors()) {
                    assertTrue(t.fileOffset() >= st.dataStart()
                            && t.fileOffset() + t.bytes() <= st.fileSize(), t.toString());
                }
                accepted++;
            } catch (FormatException expected) {
                assertTrue(expected.offset() >= 0, expected.getMessage());
                refused++;
            } catch (Throwable other) {
                fail("iteration " + iteration + " threw " + other, other);
            }
        }
        assertTrue(refused > 1000, "refused " + refused);
        assertTrue(accepted > 0, "accepted " + accepted);
    }
}
