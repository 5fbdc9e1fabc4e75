package dev.gdsloader.cufile;

import dev.gdsloader.posix.Errno;
import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.FieldModel;
import java.util.HashMap;
import java.util.Map;

/**
 * Names of cuFile's {@code CUfileOpError} codes (5000 and up, from {@code cufile.h}), read from the
 * constants of the bytedeco binding ({@code org.bytedeco.cuda.global.cufile}) so that the names cannot drift
 * from the header. The constants are read from the class file, so no native code is loaded.
 *
 * <p>Stateless and thread-safe.
 */
public final class CuFileErrors {
    private CuFileErrors() {
    }

    /** First {@code CUfileOpError} code ({@code CUFILEOP_BASE_ERR}). */
    public static final int BASE = 5000;
    /** The code {@code cuFileHandleRegister} returns when udev has no record of the disk (seen on VMs). */
    public static final int HANDLE_NOT_REGISTERED = 5027;
    private static final String BINDING = "org/bytedeco/cuda/global/cufile.class";

    private static final class Names {
        static final Map<Integer, String> BY_CODE = load();

        private static Map<Integer, String> load() {
            Map<Integer, String> m = new HashMap<>();
            m.put(0, "CU_FILE_SUCCESS");
            m.put(HANDLE_NOT_REGISTERED, "CU_FILE_HANDLE_NOT_REGISTERED");
            // read the binding's constants from its class file (java.lang.classfile): touching the fields by
            // reflection would run the class's static initialiser, which loads libcufile
            try (InputStream in = CuFileErrors.class.getClassLoader().getResourceAsStream(BINDING)) {
                if (in == null) {
                    return Map.copyOf(m);
                }
                ClassModel model = ClassFile.of().parse(in.readAllBytes());
                for (FieldModel f : model.fields()) {
                    String name = f.fieldName().stringValue();
                    if (!name.startsWith("CU_FILE_") || name.endsWith("_SUPPORTED")) {
                        continue;
                    }
                    f.findAttribute(Attributes.constantValue()).ifPresent(cv -> {
                        if (cv.constant().constantValue() instanceof Integer i && i >= BASE) {
                            m.putIfAbsent(i, name);
                        }
                    });
                }
            } catch (IOException | IllegalArgumentException e) {
                // unreadable binding: codes are printed as numbers
            }
            return Map.copyOf(m);
        }
    }

    /**
     * @param code a {@code CUfileOpError} value (0 or &ge; 5000)
     * @return e.g. "CU_FILE_HANDLE_NOT_REGISTERED (5027)"
     */
    public static String describe(int code) {
        String n = Names.BY_CODE.get(code);
        return (n == null ? "CUfileOpError" : n) + " (" + code + ")";
    }

    /**
     * Decodes the return value of {@code cuFileRead}/{@code cuFileWrite}: a negative value is either
     * {@code -CUfileOpError} (when its magnitude is &ge; 5000), {@code -1} with {@code errno} set, or
     * {@code -errno}.
     *
     * @param ret the negative return value
     * @return its name, e.g. "CU_FILE_IO_ERROR (5044)" or "EIO (5)"
     */
    public static String describeIoReturn(long ret) {
        long m = -ret;
        if (m >= BASE) {
            return describe((int) m);
        }
        if (ret == -1) {
            return "-1 (a filesystem error; errno set by libcufile)";
        }
        return Errno.describe((int) m);
    }
}
