/**
 * The native bindings: CUDA runtime and driver through JCuda ({@code dev.gdsloader.cuda}), cuFile through bytedeco
 * ({@code dev.gdsloader.cufile}), POSIX {@code O_DIRECT} I/O and file mappings through the FFM API
 * ({@code dev.gdsloader.posix}). Bindings only: every buffer is charged to the {@code dev.gdsloader.memory} module's
 * allocators.
 *
 * <p>JCuda 12.6.0 ships no module descriptor and no {@code Automatic-Module-Name}: it is the automatic module
 * {@code jcuda}, named from its jar's file name ({@code jcuda-12.6.0.jar}). bytedeco's {@code cuda} and
 * {@code javacpp} are real modules ({@code org.bytedeco.cuda}, {@code org.bytedeco.javacpp}, descriptors under
 * {@code META-INF/versions/9}). The bindings' API hands out JCuda types ({@code DeviceBuffer.pointer(offset)}: a {@code jcuda.Pointer}), so
 * {@code jcuda} is required transitively; javac warns about any requirement of an automatic module (its name follows
 * its file name), hence the narrow suppression: there is no other name to require it by.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.gdsloader.bindings {
    requires transitive dev.gdsloader.memory;
    requires transitive jcuda;
    requires transitive org.bytedeco.cuda;
    requires java.logging;

    exports dev.gdsloader.cuda;
    exports dev.gdsloader.cufile;
    exports dev.gdsloader.posix;
}
