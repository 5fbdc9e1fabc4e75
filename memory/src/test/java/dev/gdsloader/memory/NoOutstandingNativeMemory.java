package dev.gdsloader.memory;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that fails a test class which leaves native memory outstanding: after the class's last
 * test, the process root allocator ({@link NativeAllocator#root()}) must hold 0 bytes of every kind, and the
 * failure lists what is still held (with allocation sites where leak detection recorded them).
 *
 * <p>Registered for every test class of the modules whose {@code junit-platform.properties} turn on extension
 * auto-detection (it is listed in this test jar's {@code META-INF/services}); or per class with
 * {@code @ExtendWith(NoOutstandingNativeMemory.class)}. Assumes test classes run one at a time (surefire's default).
 */
public final class NoOutstandingNativeMemory implements AfterAllCallback {
    /** Used by JUnit. */
    public NoOutstandingNativeMemory() {
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (context.getRequiredTestClass().getEnclosingClass() != null) {
            return; // a @Nested class: its outer class checks once all of it ran
        }
        NativeAllocator root = NativeAllocator.root();
        long deadline = System.nanoTime() + 5_000_000_000L;
        // a loader's I/O threads or a server's session thread may still be closing what the test closed
        while (root.outstandingBytes() != 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (root.outstandingBytes() != 0) {
            throw new AssertionError(context.getRequiredTestClass().getName() + " left native memory outstanding: "
                    + root.usage() + "\n" + root.describeOutstanding());
        }
    }
}
