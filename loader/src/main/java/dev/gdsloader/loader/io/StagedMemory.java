package dev.gdsloader.loader.io;

import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotMemory;
import java.lang.foreign.MemorySegment;

/**
 * Slot memory of an engine that reads through host memory ({@link StagedReads}): the bounce and host paths.
 * Owned by its ring entry, as every {@link SlotMemory}.
 */
interface StagedMemory extends SlotMemory {
    /**
     * @return host memory the aligned covers of {@code O_DIRECT} reads land in (and, on the bounce path, the
     *     exact reads of large records before their copy), {@code SlotLayout.stagingBytes()} long; null where no
     *     read needs it
     */
    MemorySegment staging();

    /** @return host memory small records are packed into before one copy per column; null (the default) where none is */
    default MemorySegment packed() {
        return null;
    }

    /** @return how bytes move from host memory to the slot's target */
    CopyStep copy();
}
