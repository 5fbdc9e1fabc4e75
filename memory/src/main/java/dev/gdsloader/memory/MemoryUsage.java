package dev.gdsloader.memory;

import java.util.Locale;

/**
 * A snapshot of one allocator's outstanding bytes, counting its descendants: what {@code loader.stats()} and
 * {@code gdsloader doctor} show. Each field is read atomically, the set is not (a snapshot under concurrent
 * allocation may mix moments).
 *
 * @param allocator the allocator's name
 * @param hostLimit host budget, bytes ({@link NativeAllocator#UNLIMITED}: none of its own)
 * @param deviceLimit device budget, bytes ({@link NativeAllocator#UNLIMITED}: none of its own)
 * @param device outstanding {@link MemoryKind#DEVICE} bytes
 * @param pinned outstanding {@link MemoryKind#PINNED} bytes
 * @param host outstanding {@link MemoryKind#HOST} bytes
 * @param hostRegistered outstanding {@link MemoryKind#HOST_REGISTERED} bytes
 * @param cuFileRegistered outstanding {@link MemoryKind#CUFILE_REGISTERED} bytes
 */
public record MemoryUsage(String allocator, long hostLimit, long deviceLimit, long device, long pinned, long host,
                          long hostRegistered, long cuFileRegistered) {
    /** Nothing outstanding, no allocator: for counters made before any memory was. */
    public static final MemoryUsage NONE = new MemoryUsage("none", NativeAllocator.UNLIMITED, NativeAllocator.UNLIMITED,
            0, 0, 0, 0, 0);

    /**
     * @param kind a kind
     * @return its outstanding bytes
     */
    public long bytes(MemoryKind kind) {
        return switch (kind) {
            case DEVICE -> device;
            case PINNED -> pinned;
            case HOST -> host;
            case HOST_REGISTERED -> hostRegistered;
            case CUFILE_REGISTERED -> cuFileRegistered;
        };
    }

    /** @return bytes charged to the host budget: pinned + host + host-registered */
    public long hostBytes() {
        return pinned + host + hostRegistered;
    }

    /** @return outstanding bytes of every kind together (0 exactly when everything came back) */
    public long outstandingBytes() {
        return device + pinned + host + hostRegistered + cuFileRegistered;
    }

    /** @return e.g. "device 0 B, pinned 64.0 MiB, host 0 B, host-registered 0 B, cufile-registered 0 B" */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (MemoryKind k : MemoryKind.values()) {
            sb.append(sb.isEmpty() ? "" : ", ").append(k.label()).append(' ').append(size(bytes(k)));
        }
        return sb.toString();
    }

    /**
     * @param bytes a size
     * @return it in bytes and binary units, e.g. "629145600 B (600.0 MiB)"; "unlimited" for {@link NativeAllocator#UNLIMITED}
     */
    public static String size(long bytes) {
        if (bytes == NativeAllocator.UNLIMITED) {
            return "unlimited";
        }
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%d B (%.1f %s)", bytes, v, units[u]);
    }
}
