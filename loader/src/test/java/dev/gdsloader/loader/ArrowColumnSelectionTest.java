package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.path.ReadPath;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Arrow dataset with a Utf8 column and a nullable column beside two fixed-width ones (written with Arrow Java's own
 * writer): {@code GdsLoader.builder(dir).columns("x", "y")} loads the fixed-width columns on the HOST path byte-exact,
 * because the selection applies before any column is opened; a column the loader cannot read still fails, naming it,
 * when it is selected (or when all columns are).
 */
class ArrowColumnSelectionTest {
    private static final int[] ROWS = {5, 3};

    @TempDir
    Path dir;

    private Path data;
    private final ByteBuffer expectedX = ByteBuffer.allocate(4 * 8).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer expectedY = ByteBuffer.allocate(4 * 8).order(ByteOrder.LITTLE_ENDIAN);

    @BeforeEach
    void writeDataset() throws IOException {
        data = Files.createDirectories(dir.resolve("mixed"));
        Schema schema = new Schema(List.of(
                new Field("x", FieldType.notNullable(new ArrowType.Int(32, true)), null),
                new Field("name", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null),
                new Field("y", FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null),
                new Field("maybe", FieldType.nullable(new ArrowType.Int(32, true)), null)));
        try (RootAllocator alloc = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
             FileChannel ch = FileChannel.open(data.resolve("part-00000.arrow"), StandardOpenOption.CREATE_NEW,
                     StandardOpenOption.WRITE);
             ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
            w.start();
            int row = 0;
            for (int n : ROWS) {
                root.allocateNew();
                IntVector x = (IntVector) root.getVector("x");
                VarCharVector name = (VarCharVector) root.getVector("name");
                Float4Vector y = (Float4Vector) root.getVector("y");
                IntVector maybe = (IntVector) root.getVector("maybe");
                for (int i = 0; i < n; i++, row++) {
                    x.setSafe(i, 1000 + row);
                    name.setSafe(i, ("record " + row).getBytes(StandardCharsets.UTF_8));
                    y.setSafe(i, row * 0.5f);
                    if (row % 3 == 0) {
                        maybe.setNull(i);
                    } else {
                        maybe.setSafe(i, row);
                    }
                    expectedX.putInt(1000 + row);
                    expectedY.putFloat(row * 0.5f);
                }
                root.setRowCount(n);
                w.writeBatch();
            }
            w.end();
        }
    }

    @Test
    void theSelectedFixedWidthColumnsLoadByteExactOnTheHostPath() throws IOException {
        ByteArrayOutputStream x = new ByteArrayOutputStream();
        ByteArrayOutputStream y = new ByteArrayOutputStream();
        try (GdsLoader loader = GdsLoader.builder(data).columns("x", "y").batchSize(3).path(ReadPath.HOST).build()) {
            assertEquals(List.of("x", "y"), loader.dataset().columns().stream().map(c -> c.name()).toList());
            for (Batch b : loader) {
                try (b) {
                    x.writeBytes(b.column("x").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                    y.writeBytes(b.column("y").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                }
            }
        }
        assertArrayEquals(expectedX.array(), x.toByteArray());
        assertArrayEquals(expectedY.array(), y.toByteArray());
    }

    @Test
    void selectingTheUtf8ColumnStillFailsNamingIt() {
        IOException e = assertThrows(IOException.class,
                () -> GdsLoader.builder(data).columns("x", "name").batchSize(3).path(ReadPath.HOST).build().close());
        assertTrue(e.getMessage().contains(data.resolve("part-00000.arrow").toString()) && e.getMessage().contains("'name'"),
                e.getMessage());
        IOException nullable = assertThrows(IOException.class, () -> Dataset.open(data, List.of("maybe")));
        assertTrue(nullable.getMessage().contains("'maybe'"), nullable.getMessage());
        IOException all = assertThrows(IOException.class, () -> Dataset.open(data));
        assertTrue(all.getMessage().contains("'name'"), all.getMessage());
    }

    @Test
    void aColumnThatDoesNotExistIsNamedWithTheOnesThatDo() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Dataset.open(data, List.of("x", "z")));
        assertEquals(data + ": no column 'z'; columns are [x, name, y, maybe]", e.getMessage());
    }
}
