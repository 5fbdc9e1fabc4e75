package dev.gdsloader.cuda;

import jcuda.Pointer;
import jcuda.runtime.cudaEvent_t;
import jcuda.runtime.cudaStream_t;

/**
 * JCuda handle types that expose their raw native address, so the same memory, stream or event can be
 * handed to other native libraries (cuFile through JavaCPP, the FFM API) in the same process.
 *
 * <p>JCuda keeps addresses in a protected field; these subclasses read it. JCuda fills them in place
 * (for example {@code cudaMalloc(pointer, size)}), so they are passed wherever JCuda wants its own type.
 * Internal to this package.
 */
final class NativeAddress {
    private NativeAddress() {
    }

    /** A JCuda {@link Pointer} whose address (native pointer plus byte offset) can be read. */
    static final class AddressPointer extends Pointer {
        long address() {
            return getNativePointer() + getByteOffset();
        }
    }

    /** A JCuda stream whose {@code cudaStream_t} value can be read. */
    static final class AddressStream extends cudaStream_t {
        long address() {
            return getNativePointer();
        }
    }

    /** A JCuda event whose {@code cudaEvent_t} value can be read. */
    static final class AddressEvent extends cudaEvent_t {
        long address() {
            return getNativePointer();
        }
    }
}
