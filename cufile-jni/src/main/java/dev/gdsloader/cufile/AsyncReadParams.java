package dev.gdsloader.cufile;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The host parameter block of one {@code cuFileReadAsync}: four 64-bit words, {@code size} ({@code size_t}),
 * {@code file_offset} and {@code bufPtr_offset} ({@code off_t}), and {@code bytes_read} ({@code ssize_t}).
 * cuFile keeps the pointers to these words and reads the inputs and writes {@code bytes_read} when the
 * stream executes the read, so the block must stay allocated until the stream has passed it.
 *
 * <p>Native memory from a shared {@link Arena}, freed once by {@link #close()}; any access after that throws
 * {@link IllegalStateException}. {@code bytes_read} is set to {@link #NOT_WRITTEN} by {@link #set} so a read
 * that cuFile never completed is told apart from one that returned a count. Owned by one {@link AsyncRead};
 * the owner orders accesses (fields are written before the read is enqueued and read after it completed).
 * Needs no CUDA or cuFile library.
 */
final class AsyncReadParams implements AutoCloseable {
    /** Value of {@code bytes_read} before cuFile wrote it. */
    static final long NOT_WRITTEN = Long.MIN_VALUE;
    static final int SIZE = 0;
    static final int FILE_OFFSET = 1;
    static final int BUF_OFFSET = 2;
    static final int BYTES_READ = 3;
    private static final int WORDS = 4;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment block = arena.allocate(ValueLayout.JAVA_LONG, WORDS);
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Writes the inputs of the next read and marks {@code bytes_read} as not written.
     *
     * @param size bytes to read, &ge; 0
     * @param fileOffset byte offset in the file, &ge; 0
     * @param bufOffset byte offset from the device buffer's base, &ge; 0
     */
    void set(long size, long fileOffset, long bufOffset) {
        checkOpen();
        block.setAtIndex(ValueLayout.JAVA_LONG, SIZE, size);
        block.setAtIndex(ValueLayout.JAVA_LONG, FILE_OFFSET, fileOffset);
        block.setAtIndex(ValueLayout.JAVA_LONG, BUF_OFFSET, bufOffset);
        block.setAtIndex(ValueLayout.JAVA_LONG, BYTES_READ, NOT_WRITTEN);
    }

    /**
     * @param word one of {@link #SIZE}, {@link #FILE_OFFSET}, {@link #BUF_OFFSET}, {@link #BYTES_READ}
     * @return the word's value
     */
    long get(int word) {
        checkOpen();
        return block.getAtIndex(ValueLayout.JAVA_LONG, word);
    }

    /**
     * @param word one of {@link #SIZE}, {@link #FILE_OFFSET}, {@link #BUF_OFFSET}, {@link #BYTES_READ}
     * @return the native address of the word, to hand to cuFile
     */
    long address(int word) {
        checkOpen();
        return block.address() + (long) word * Long.BYTES;
    }

    /** @return true once {@link #close()} has run */
    boolean isClosed() {
        return closed.get();
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("cuFileReadAsync parameter block is already freed");
        }
    }

    /** Frees the block the first time it is called; later calls do nothing. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
        }
    }
}
