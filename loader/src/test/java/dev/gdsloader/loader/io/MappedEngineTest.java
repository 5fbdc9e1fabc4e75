package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.loader.TestShards;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.memory.MemoryBudgetException;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The MAPPED engine's bookkeeping without a GPU (a registry that maps for real and registers nothing): the budget
 * refusal names both sizes and maps nothing, a shard changed between epochs is named, and closing gives every
 * mapping and every charged byte back.
 */
class MappedEngineTest {
    @TempDir
    Path dir;

    private Dataset dataset() throws IOException {
        TestShards.writeImages(dir, 30, 40);
        TestShards.writeLabels(dir, 30, 40);
        return Dataset.open(dir);
    }

    /** @return settings charging registrations to {@code budget} */
    static EngineConfig config(NativeAllocator budget) {
        return new EngineConfig(1 << 20, false, 0, budget);
    }

    private static NativeAllocator budget(long hostBytes) {
        return NativeAllocator.root().newChild("MappedEngineTest", hostBytes, NativeAllocator.UNLIMITED);
    }

    @Test
    void overBudgetIsRefusedNamingBothSizesBeforeAnythingIsMapped() throws IOException {
        Dataset ds = dataset();
        Map<Path, Long> files = MappedEngine.files(ds);
        assertEquals(4, files.size());
        long total = files.values().stream().mapToLong(Long::longValue).sum();
        try (NativeAllocator tiny = budget(total - 1)) {
            Optional<String> why = MappedEngine.overBudget(files, tiny);
            assertTrue(why.isPresent());
            assertTrue(why.get().startsWith("the dataset's 4 shard file(s) (" + total + " bytes, "), why.get());
            assertTrue(why.get().contains("do not fit the host budget of 'MappedEngineTest' (" + (total - 1) + " bytes, "),
                    why.get());
            MappedShards registry = new MappedShards(MappedShards.IDENTITY);
            assertThrows(MemoryBudgetException.class, () -> new MappedEngine(ds, config(tiny), registry, -1));
            assertEquals(0, registry.size(), "nothing mapped");
            assertEquals(0, tiny.outstandingBytes(), "nothing charged");
        }
        try (NativeAllocator exact = budget(total)) {
            assertEquals(Optional.empty(), MappedEngine.overBudget(files, exact));
        }
    }

    @Test
    void aShardChangedBetweenEpochsIsNamedAndCloseGivesEverythingBack() throws IOException {
        Dataset ds = dataset();
        MappedShards registry = new MappedShards(MappedShards.IDENTITY);
        Path changed = dir.resolve("labels-00001.npy");
        try (NativeAllocator a = budget(NativeAllocator.UNLIMITED)) {
            try (MappedEngine e = new MappedEngine(ds, config(a), registry, -1)) {
                assertEquals(PathTaken.MAPPED, e.pathTaken());
                long files = MappedEngine.files(ds).values().stream().mapToLong(Long::longValue).sum();
                assertEquals(files, e.registeredBytes());
                assertTrue(e.registrationNanos() > 0);
                assertEquals(files, a.usage().bytes(MemoryKind.HOST_REGISTERED));
                assertEquals(4, registry.size());
                e.checkEpoch();
                Files.setLastModifiedTime(changed, FileTime.fromMillis(Files.getLastModifiedTime(changed).toMillis() + 5000));
                IOException x = assertThrows(IOException.class, e::checkEpoch);
                assertTrue(x.getMessage().startsWith(changed + ": changed since it was registered for the MAPPED path"),
                        x.getMessage());
            }
            assertEquals(0, registry.size(), "unmapped at close");
            assertEquals(0, a.outstandingBytes(), "charges given back at close");
        }
    }

    @Test
    void aTruncatedShardIsNamedWithBothSizes() throws IOException {
        Dataset ds = dataset();
        MappedShards registry = new MappedShards(MappedShards.IDENTITY);
        Path shard = dir.resolve("images-00000.npy");
        long size = Files.size(shard);
        try (NativeAllocator a = budget(NativeAllocator.UNLIMITED); MappedEngine e = new MappedEngine(ds, config(a), registry, -1)) {
            try (var ch = java.nio.channels.FileChannel.open(shard, java.nio.file.StandardOpenOption.WRITE)) {
                ch.truncate(size - 784);
            }
            IOException x = assertThrows(IOException.class, e::checkEpoch);
            assertTrue(x.getMessage().startsWith(shard + ": changed since it was registered for the MAPPED path (size "
                    + size + " -> " + (size - 784) + " bytes"), x.getMessage());
        }
        assertEquals(0, registry.size());
    }

    @Test
    void twoEnginesOverOneDatasetShareTheMappingsAndEachIsCharged() throws IOException {
        Dataset ds = dataset();
        MappedShards registry = new MappedShards(MappedShards.IDENTITY);
        try (NativeAllocator a = budget(NativeAllocator.UNLIMITED); NativeAllocator b = budget(NativeAllocator.UNLIMITED)) {
            MappedEngine one = new MappedEngine(ds, config(a), registry, -1);
            try (MappedEngine two = new MappedEngine(Dataset.open(dir, List.of("images")), config(b), registry, -1)) {
                assertEquals(4, registry.size(), "the images files are shared");
                one.close();
                assertEquals(2, registry.size(), "the second engine still holds the images files");
                assertEquals(0, a.outstandingBytes());
                assertEquals(two.registeredBytes(), b.usage().bytes(MemoryKind.HOST_REGISTERED));
            }
            assertEquals(0, registry.size());
        }
    }
}
