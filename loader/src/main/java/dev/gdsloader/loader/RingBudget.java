package dev.gdsloader.loader;

import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.util.Locale;

/** The budget check a loader makes before it allocates its ring of slots. Stateless. */
final class RingBudget {
    private RingBudget() {
    }

    /**
     * Refuses, before any slot is allocated, a ring whose host memory (pinned, or plain on the HOST path) or device
     * memory does not fit the budgets of {@code allocator} and its ancestors (by default the root's host budget: half
     * of the machine's memory).
     *
     * @param allocator the loader's allocator
     * @param hostPerSlot host bytes per slot
     * @param devicePerSlot device bytes per slot
     * @param depth slots in the ring (the prefetch depth)
     * @param path the loader's path (HOST: plain host memory, else pinned)
     * @throws dev.gdsloader.memory.MemoryBudgetException naming the depth, the bytes per slot and the total
     */
    static void check(NativeAllocator allocator, long hostPerSlot, long devicePerSlot, int depth, PathTaken path) {
        String hint = ": use a smaller batch or prefetch depth, or a larger budget";
        allocator.checkAvailable(path == PathTaken.HOST ? MemoryKind.HOST : MemoryKind.PINNED, hostPerSlot * depth,
                ring(depth, hostPerSlot, "host") + hint);
        allocator.checkAvailable(MemoryKind.DEVICE, devicePerSlot * depth, ring(depth, devicePerSlot, "device") + hint);
    }

    private static String ring(int depth, long perSlot, String kind) {
        return String.format(Locale.ROOT, "prefetch depth %d x %.1f MiB of %s memory per slot = %.2f GB", depth,
                perSlot / 1048576.0, kind, (double) perSlot * depth / 1e9);
    }
}
