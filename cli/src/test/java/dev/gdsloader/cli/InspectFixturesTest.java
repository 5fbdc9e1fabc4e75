package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * {@code gdsloader inspect} on every real-writer fixture: exit 0 with the structure (each column, array or tensor named
 * with its dtype; refused Arrow columns marked "not loadable" with the reason) for files the product accepts; a
 * non-zero exit with the file and the reason for files it refuses (big-endian, Fortran-order {@code .npy}).
 */
class InspectFixturesTest {
    @TestFactory
    Stream<DynamicTest> inspectPrintsEveryFixturesStructureOrItsRefusal() {
        return RealWriterFixtures.files().stream().map(f -> DynamicTest.dynamicTest(f.getFileName().toString(), () -> {
            CommandRun r = CommandRun.execute(new InspectCommand(), f.toString());
            Optional<String> refusal = RealWriterFixtures.fileRefusal(f);
            if (refusal.isPresent()) {
                assertTrue(r.exitCode() != 0, r.toString());
                assertTrue(r.err().contains(f + ": at byte offset ") && r.err().contains(refusal.get()), r.toString());
                return;
            }
            assertEquals(0, r.exitCode(), r.toString());
            assertTrue(r.out().startsWith(f + System.lineSeparator()), r.toString());
            structure(f, r);
        }));
    }

    @org.junit.jupiter.api.Test
    void inspectPrintsEachArrowBatchsBodyAndBufferExtents() throws IOException {
        Path f = RealWriterFixtures.directory().resolve("arrow-nulls-file.arrow");
        CommandRun r = CommandRun.execute(new InspectCommand(), f.toString());
        assertEquals(0, r.exitCode(), r.toString());
        dev.gdsloader.formats.arrow.ArrowBatchLayout l = dev.gdsloader.formats.arrow.ArrowIpcFile.open(f).batchLayout(1);
        assertTrue(r.out().contains("  batch 1 body bytes " + l.bodyOffset() + ".." + (l.bodyOffset() + l.bodyLength())
                + " (" + l.bodyLength() + " bytes)" + System.lineSeparator()), r.toString());
        dev.gdsloader.formats.arrow.ArrowBatchLayout.Column name = l.columns().stream()
                .filter(c -> c.name().equals("name")).findFirst().orElseThrow();
        assertTrue(r.out().contains("  batch 1 name     Utf8, " + name.nullCount() + " nulls, buffers VALIDITY "
                + name.buffers().get(0).offset() + "+" + name.buffers().get(0).length() + ", OFFSETS "
                + name.buffers().get(1).offset() + "+" + name.buffers().get(1).length() + ", VALUES "
                + name.buffers().get(2).offset() + "+" + name.buffers().get(2).length()), r.toString());
    }

    /** Every column of the fixture appears with its dtype, or as not loadable with the product's reason. */
    private static void structure(Path f, CommandRun r) throws IOException {
        String n = f.getFileName().toString();
        if (n.endsWith(".npy")) {
            assertTrue(r.out().contains("  header        .npy v"), r.toString());
        }
        for (RealWriterFixtures.Column c : RealWriterFixtures.columns(f)) {
            if (c.refusal().isPresent()) {
                assertTrue(r.out().contains(" not loadable: " + f + ": at byte offset "), r.toString());
                assertTrue(r.out().contains(c.refusal().get()), c.name() + "\n" + r);
                continue;
            }
            String dtype = DType.fromNumpyDescr(c.dtype(), f, 0).name();
            String named = n.endsWith(".npz") ? "member " + c.name() + ".npy" : n.endsWith(".safetensors") ? "tensor "
                    + c.name() : n.endsWith(".npy") ? "records       " + c.shape()[0] + " of " + dtype : c.name() + " ";
            assertTrue(r.out().contains(named) && r.out().contains(dtype), named + "\n" + r);
        }
    }
}
