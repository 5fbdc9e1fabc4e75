package dev.gdsloader.memory;

/**
 * Closing several resources of one owner so that one failing close does not leak the others. Stateless and
 * thread-safe.
 */
public final class Closeables {
    private Closeables() {
    }

    /**
     * Closes every non-null resource, in the order given, whatever earlier ones threw.
     *
     * @param resources the resources; nulls are skipped
     * @return the first failure, with the later ones added to it as suppressed; null if every close succeeded
     */
    public static Exception closeAll(AutoCloseable... resources) {
        Exception first = null;
        for (AutoCloseable c : resources) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        return first;
    }
}
