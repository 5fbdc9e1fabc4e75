package dev.gdsloader.cufile;

import java.io.IOException;

/**
 * A cuFile call failed. The message names the call, the file (where there is one), offsets and lengths
 * in bytes, and the decoded error ({@link CuFileErrors}).
 */
public class CuFileException extends IOException {
    private static final long serialVersionUID = 1L;
    private final long code;

    /**
     * @param message what failed, with the decoded error
     * @param code the raw code: a {@code CUfileOpError} (&ge; 5000), an errno, or the negative return value
     */
    public CuFileException(String message, long code) {
        super(message);
        this.code = code;
    }

    /** @return the raw error code as described in the constructor */
    public long code() {
        return code;
    }
}
