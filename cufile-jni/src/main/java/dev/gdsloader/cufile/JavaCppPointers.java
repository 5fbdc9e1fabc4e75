package dev.gdsloader.cufile;

import org.bytedeco.javacpp.Pointer;

/**
 * JavaCPP {@link Pointer}s over raw addresses owned elsewhere (device memory from JCuda's
 * {@code cudaMalloc}): JCuda and the bytedeco cuFile binding share the device's primary context, so a
 * device pointer from one is valid in the other. These pointers own nothing and free nothing.
 */
final class JavaCppPointers {
    private JavaCppPointers() {
    }

    /** A non-owning JavaCPP pointer to {@code address}. */
    static Pointer at(long address) {
        return new Borrowed(address);
    }

    private static final class Borrowed extends Pointer {
        Borrowed(long address) {
            this.address = address;
        }
    }
}
