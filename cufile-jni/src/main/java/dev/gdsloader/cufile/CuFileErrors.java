package dev.gdsloader.cufile;

import dev.gdsloader.posix.Errno;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;

/**
 * Names of cuFile's {@code CUfileOpError} codes (5000 and up, from {@code cufile.h}), read from the
 * constants of the bytedeco binding ({@code org.bytedeco.cuda.global.cufile}) by reflection so that the
 * names cannot drift from the header. Reading constants loads no native code.
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

    private static final class Names {
        static final Map<Integer, String> BY_CODE = load();

        private static Map<Integer, String> load() {
            Map<Integer, String> m = new HashMap<>();
            m.put(0, "CU_FILE_SUCCESS");
            try {
                // the class's static initialiser loads native code; read its constants without initialising it
                Class<?> c = Class.forName("org.bytedeco.cuda.global.cufile", false, CuFileErrors.class.getClassLoader());
                for (Field f : c.getFields()) {
                    if (f.getType() == int.class && Modifier.isStatic(f.getModifiers()) && Modifier.isFinal(f.getModifiers())
                            && f.getName().startsWith("CU_FILE_") && !f.getName().endsWith("_SUPPORTED")) {
                        Object v = f.get(null);
                        if (v instanceof Integer i && i >= BASE) {
                            m.putIfAbsent(i, f.getName());
                        }
                    }
                }
            } catch (ReflectiveOperationException | LinkageError e) {
                m.put(HANDLE_NOT_REGISTERED, "CU_FILE_HANDLE_NOT_REGISTERED");
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
