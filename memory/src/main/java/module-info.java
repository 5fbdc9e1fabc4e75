/**
 * The accounting of native memory, in pure Java: the {@code NativeAllocator} tree every native byte is charged to,
 * leak detection and reference-count errors. Every gds-loader module may read it; it reads only the JDK.
 */
module dev.gdsloader.memory {
    requires java.logging;
    // the root allocator's default host budget: half of physical memory (OperatingSystemMXBean)
    requires java.management;
    requires jdk.management;

    exports dev.gdsloader.memory;
}
