package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.io.HostEngine;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotMemory;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.cuda.CudaException;
import dev.gdsloader.cuda.PinnedAllocationException;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ring in one place: each entry's memory, plan, views and load; a ring that cannot be completed frees itself. */
class PrefetchRingTest {
    @TempDir
    Path dir;

    /** What a refused slot throws. */
    @FunctionalInterface
    private interface Refusal {
        void refuse(int index) throws IOException;
    }

    /** An engine (the host engine), refusing to allocate slot {@code failAt}; remembers the memory it handed out. */
    private static final class FailingAt<S extends SlotMemory> implements IoEngine<S> {
        private final IoEngine<S> host;
        private final int failAt;
        private final Refusal refusal;
        final List<SlotMemory> made = new ArrayList<>();

        FailingAt(IoEngine<S> host, int failAt) {
            this(host, failAt, index -> {
                throw new IOException("slot " + index + ": cuFileBufRegister failed");
            });
        }

        FailingAt(IoEngine<S> host, int failAt, Refusal refusal) {
            this.host = host;
            this.failAt = failAt;
            this.refusal = refusal;
        }

        @Override
        public PathTaken pathTaken() {
            return host.pathTaken();
        }

        @Override
        public S allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) throws IOException {
            if (index == failAt) {
                refusal.refuse(index);
            }
            S m = host.allocateSlot(index, layout, allocator);
            made.add(m);
            return m;
        }

        @Override
        public SlotLoad newLoad(int index, S slot, SlotLayout layout, int[] maxPieces) {
            return host.newLoad(index, slot, layout, maxPieces);
        }

        @Override
        public int maxOps(SlotLayout layout, int[] maxPieces) {
            return host.maxOps(layout, maxPieces);
        }

        @Override
        public long viewOffset(SlotLayout layout, ColumnPieces column) {
            return host.viewOffset(layout, column);
        }

        @Override
        public long hostBytesPerSlot(SlotLayout layout) {
            return host.hostBytesPerSlot(layout);
        }

        @Override
        public long ioNanos() {
            return host.ioNanos();
        }

        @Override
        public void close() {
            host.close();
        }
    }

    @Test
    void entriesHoldTheirOwnMemoryPlanViewsAndLoad() throws IOException {
        TestShards.writeImages(dir, 10);
        Dataset ds = Dataset.open(dir);
        int[] maxPieces = {2};
        SlotLayout layout = SlotLayout.forBatch(ds.columns(), 4, c -> 2);
        try (HostEngine e = new HostEngine(ds, new EngineConfig(1 << 20, false, 0));
             PrefetchRing ring = PrefetchRing.allocate(e, ds.columns(), layout, maxPieces, 3, NativeAllocator.root())) {
            assertEquals(3, ring.size());
            assertEquals(PathTaken.HOST, ring.path());
            for (int i = 0; i < 3; i++) {
                RingEntry r = ring.entries().get(i);
                assertEquals(i, r.index);
                assertEquals(layout.targetBytes(), r.memory.hostTarget().byteSize());
                assertEquals(List.of("images"), java.util.Arrays.stream(r.views).map(v -> v.name).toList());
            }
        }
    }

    @Test
    void aRingThatCannotBeCompletedFreesTheEntriesItHadMade() throws IOException {
        TestShards.writeImages(dir, 10);
        Dataset ds = Dataset.open(dir);
        SlotLayout layout = SlotLayout.forBatch(ds.columns(), 4, c -> 2);
        try (FailingAt<?> e = new FailingAt<>(new HostEngine(ds, new EngineConfig(1 << 20, false, 0)), 2)) {
            IOException x = assertThrows(IOException.class, () -> PrefetchRing.allocate(e, ds.columns(), layout, new int[] {2}, 4, NativeAllocator.root()));
            assertEquals("slot 2: cuFileBufRegister failed", x.getMessage());
            assertEquals(2, e.made.size());
            for (SlotMemory m : e.made) {
                assertThrows(IllegalStateException.class, () -> m.hostTarget().get(ValueLayout.JAVA_BYTE, 0),
                        "slot memory made before the failure was freed");
            }
        }
    }

    @Test
    void aHostThatRefusesToPinMoreFromTheThirdSlotOnLeavesARingOfTwo() throws IOException {
        TestShards.writeImages(dir, 10);
        Dataset ds = Dataset.open(dir);
        SlotLayout layout = SlotLayout.forBatch(ds.columns(), 4, c -> 2);
        Refusal pinned = index -> {
            throw new PinnedAllocationException(layout.stagingBytes(), 2, "cudaErrorMemoryAllocation");
        };
        try (FailingAt<?> e = new FailingAt<>(new HostEngine(ds, new EngineConfig(1 << 20, false, 0)), 2, pinned);
             PrefetchRing ring = PrefetchRing.allocate(e, ds.columns(), layout, new int[] {2}, 4, NativeAllocator.root())) {
            assertEquals(2, ring.size(), "the ring runs with the slots it has");
        }
        try (FailingAt<?> e = new FailingAt<>(new HostEngine(ds, new EngineConfig(1 << 20, false, 0)), 1, pinned)) {
            assertThrows(PinnedAllocationException.class,
                    () -> PrefetchRing.allocate(e, ds.columns(), layout, new int[] {2}, 4, NativeAllocator.root()),
                    "fewer than two slots: the refusal is the loader's failure");
        }
        Refusal device = index -> {
            throw new CudaException("cudaMalloc(" + layout.targetBytes() + " bytes)", 2, "cudaErrorMemoryAllocation");
        };
        try (FailingAt<?> e = new FailingAt<>(new HostEngine(ds, new EngineConfig(1 << 20, false, 0)), 2, device)) {
            assertThrows(CudaException.class,
                    () -> PrefetchRing.allocate(e, ds.columns(), layout, new int[] {2}, 4, NativeAllocator.root()),
                    "device memory refused: no shrinking");
            assertEquals(2, e.made.size());
        }
    }
}
