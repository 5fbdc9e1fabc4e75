package dev.gdsloader.memory;

import java.util.Optional;

/**
 * Checks, at the first use of a part that needs them, the JVM flags gds-loader's JVMs run with ({@code bin/jvm-flags},
 * one place for all of them), so a missing one is named instead of surfacing later as another error. Stateless and
 * thread-safe; each check is a few reflective reads.
 */
public final class JvmFlags {
    /**
     * Arrow Java's memory ({@code org.apache.arrow.memory.core}) reads {@code java.nio.Buffer}'s address field: without
     * this opening, its first use fails ({@code Failed to initialize MemoryUtil}; in the prefetch client, gRPC's
     * {@code Failed to read message}). The module whose name it carries is Arrow's (its modular JAR on the module path),
     * or every class-path module ({@code ALL-UNNAMED}).
     */
    public static final String ARROW_MEMORY_MODULE = "org.apache.arrow.memory.core";

    /** Set once the check passed: later calls return at once (the JVM's flags do not change). */
    private static volatile boolean arrowChecked;

    private JvmFlags() {
    }

    /**
     * Requires {@code java.nio} open to Arrow Java's memory module: the flag {@code --add-opens=java.base/java.nio=M},
     * where M is {@value #ARROW_MEMORY_MODULE} if that module is in the boot layer, else {@code ALL-UNNAMED}.
     *
     * @param who what needs it, for the message (e.g. "the prefetch client (Arrow Flight)")
     * @throws MissingJvmFlagException naming the exact flag and {@code bin/jvm-flags}, if the opening is missing
     */
    public static void requireArrowMemoryAccess(String who) {
        if (arrowChecked) {
            return;
        }
        Optional<Module> named = ModuleLayer.boot().findModule(ARROW_MEMORY_MODULE);
        Module arrow = named.orElse(JvmFlags.class.getClassLoader() != null
                ? JvmFlags.class.getClassLoader().getUnnamedModule() : ClassLoader.getSystemClassLoader().getUnnamedModule());
        if (!Object.class.getModule().isOpen("java.nio", arrow)) {
            String flag = "--add-opens=java.base/java.nio=" + (named.isPresent() ? ARROW_MEMORY_MODULE : "ALL-UNNAMED");
            throw new MissingJvmFlagException(flag, who + " needs the JVM flag " + flag + " (Arrow Java's memory reads "
                    + "java.nio.Buffer's address field; without it Arrow fails later with an error that does not say so): start "
                    + "java with it, or with @bin/jvm-flags, which lists every flag gds-loader needs");
        }
        arrowChecked = true;
    }
}
