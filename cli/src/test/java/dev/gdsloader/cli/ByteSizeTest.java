package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@link ByteSize}: size options in bytes. */
class ByteSizeTest {
    private final ByteSize size = new ByteSize();

    @Test
    void plainNumbersAreBytes() {
        assertEquals(4096L, size.convert("4096"));
        assertEquals(0L, size.convert("0"));
        assertEquals(512L, size.convert("512b"));
    }

    @Test
    void binarySuffixesArePowersOf1024() {
        assertEquals(64L * 1024, size.convert("64KiB"));
        assertEquals(8L << 20, size.convert("8MiB"));
        assertEquals(1L << 30, size.convert("1GiB"));
        assertEquals(2L << 40, size.convert("2TiB"));
        assertEquals(3L << 50, size.convert("3PiB"));
        assertEquals(1L << 50, size.convert("1P"), "a bare P is binary, as K, M, G and T are");
        assertEquals(4L << 50, size.convert("4pib"), "case-insensitive");
        assertEquals(1L << 30, size.convert("1gib"), "case-insensitive");
        assertEquals(1L << 20, size.convert("1M"), "a bare unit letter is binary");
        assertEquals(8L << 20, size.convert(" 8 MiB "), "spaces around and before the unit");
    }

    @Test
    void decimalSuffixesArePowersOf1000() {
        assertEquals(1_000_000_000L, size.convert("1GB"));
        assertEquals(64_000L, size.convert("64kB"));
        assertEquals(3_000_000L, size.convert("3MB"));
        assertEquals(2_000_000_000_000_000L, size.convert("2PB"));
    }

    @Test
    void unknownUnitsAreRejectedWithAnExample() {
        for (String bad : new String[] {"12XB", "", "MiB", "-4096", "1.5GiB", "4 KiBs"}) {
            CommandLine.TypeConversionException e = assertThrows(CommandLine.TypeConversionException.class,
                    () -> size.convert(bad), bad);
            assertTrue(e.getMessage().contains("'" + bad + "'"), e.getMessage());
            assertTrue(e.getMessage().contains("64KiB"), e.getMessage());
        }
    }

    @Test
    void overflowIsRejectedAsTooLarge() {
        CommandLine.TypeConversionException e = assertThrows(CommandLine.TypeConversionException.class,
                () -> size.convert("9999999TiB"));
        assertTrue(e.getMessage().contains("too large"), e.getMessage());
        assertEquals(8L << 40, size.convert("8TiB"));
        assertEquals(8191L << 50, size.convert("8191PiB"), "the largest whole PiB a long holds");
        CommandLine.TypeConversionException p = assertThrows(CommandLine.TypeConversionException.class,
                () -> size.convert("8192PiB"));
        assertTrue(p.getMessage().contains("'8192PiB' is too large"), p.getMessage());
    }

    @Test
    void numbersBeyondALongAreAUsageErrorOfTheCommand() {
        CommandRun r = CommandRun.execute(new GenerateCommand(), "--out", "unused", "--size", "99999999999999999999");
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().contains("--size"), r.toString());
    }

    @Test
    void formatUsesTheLargestBinaryUnit() {
        assertEquals("1.00 GiB", ByteSize.format(1L << 30));
        assertEquals("3.00 PiB", ByteSize.format(3L << 50));
        assertEquals("8.0 MiB", ByteSize.format(8L << 20));
        assertEquals("4096 bytes", ByteSize.format(4096));
        // just under a unit reads as one of it (generate --size 1PiB of 150528 B records: 1 PiB less part of a record)
        assertEquals("1.00 PiB", ByteSize.format((1L << 50) - 100_000));
        assertEquals("1.00 TiB", ByteSize.format((1L << 40) - 1));
        assertEquals("1023.00 GiB", ByteSize.format(1023L << 30));
    }
}
