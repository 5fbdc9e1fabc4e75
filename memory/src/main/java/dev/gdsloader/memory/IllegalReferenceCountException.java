package dev.gdsloader.memory;

/**
 * A reference-counted object was released more often than it was retained, retained after its last release,
 * or used after its last release (Netty's exception of the same name). The message names the object.
 */
public final class IllegalReferenceCountException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what was done to which object, e.g. "batch 3 of epoch 0 (...) was already released"
     */
    public IllegalReferenceCountException(String message) {
        super(message);
    }
}
