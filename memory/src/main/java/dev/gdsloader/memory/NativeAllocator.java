package dev.gdsloader.memory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The accounting of every native byte: device memory, pinned memory, plain host memory, host registrations and
 * cuFile buffer registrations, in a tree of allocators with budgets, in the spirit of Arrow's
 * {@code BufferAllocator}.
 *
 * <p>The process has one {@link #root()}, whose host budget is half of the host's physical memory (the rule the
 * loader has always applied to its ring; system property {@value #HOST_LIMIT_PROPERTY} overrides it) and whose
 * device budget is unlimited unless {@value #DEVICE_LIMIT_PROPERTY} sets one. Each loader and each service session
 * takes a child ({@link #newChild}) with its own limits. A buffer is charged to its allocator and to every ancestor
 * ({@link #reserve}); a reservation that would take any of them past its budget throws a
 * {@link MemoryBudgetException} naming that allocator, its limit, the request and who holds the rest, and charges
 * nothing. Releasing a buffer returns its bytes to every ancestor. {@link #close()} with anything outstanding
 * throws, listing what (kind, bytes, allocation site where {@link LeakDetector} recorded one), like Arrow's
 * "Memory was leaked".
 *
 * <p>The buffers themselves take an allocator: {@code DeviceBuffer.allocate(bytes, allocator)},
 * {@code PinnedBuffer.allocate(bytes, allocator)}, {@code new AlignedMemory(bytes, alignment, allocator)},
 * {@code CuFileBufferRegistration.register(buffer, allocator)}; their one-argument forms charge the root. A host
 * registration ({@code cudaHostRegister}) charges {@link MemoryKind#HOST_REGISTERED} through {@link #reserve}.
 *
 * <p>Thread-safe: reservations are atomic compare-and-set steps up the tree (a failed step rolls back the ones
 * below it), like Arrow's {@code Accountant}. The owner closes an allocator once its users are done; reserving
 * from a closed allocator throws.
 */
public final class NativeAllocator implements AutoCloseable {
    /** A limit that never binds. */
    public static final long UNLIMITED = Long.MAX_VALUE;
    /** System property: the root's host budget, bytes (default: half of the host's physical memory). */
    public static final String HOST_LIMIT_PROPERTY = "gdsloader.memory.hostLimit";
    /** System property: the root's device budget, bytes (default: unlimited; the GPU refuses what it lacks). */
    public static final String DEVICE_LIMIT_PROPERTY = "gdsloader.memory.deviceLimit";

    private static final MemoryKind[] KINDS = MemoryKind.values();

    private final String name;
    private final NativeAllocator parent;
    private final long hostLimit;
    private final long deviceLimit;
    private final AtomicLong hostCharged = new AtomicLong();
    private final AtomicLong deviceCharged = new AtomicLong();
    /** Outstanding bytes by kind, this allocator and its descendants. */
    private final AtomicLongArray byKind = new AtomicLongArray(KINDS.length);
    /** This allocator's own outstanding allocations. */
    private final Set<Allocation> ledger = ConcurrentHashMap.newKeySet();
    /** Children not yet closed, or closed with something outstanding. */
    private final Set<NativeAllocator> children = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    private NativeAllocator(String name, NativeAllocator parent, long hostLimit, long deviceLimit) {
        this.name = name;
        this.parent = parent;
        this.hostLimit = hostLimit;
        this.deviceLimit = deviceLimit;
    }

    private static final class RootHolder {
        static final NativeAllocator ROOT = new NativeAllocator("root", null,
                limitFrom(HOST_LIMIT_PROPERTY, System.getProperty(HOST_LIMIT_PROPERTY), hostMemoryBytes() / 2),
                limitFrom(DEVICE_LIMIT_PROPERTY, System.getProperty(DEVICE_LIMIT_PROPERTY), UNLIMITED));
    }

    /**
     * @return the process root: host budget half of physical memory (or {@value #HOST_LIMIT_PROPERTY}), device
     *     budget unlimited (or {@value #DEVICE_LIMIT_PROPERTY}); never closed
     * @throws IllegalArgumentException (on first use) if a property is not a byte count &ge; 0
     */
    public static NativeAllocator root() {
        return RootHolder.ROOT;
    }

    /** @return the host's physical memory, bytes ({@code OperatingSystemMXBean.getTotalMemorySize}) */
    public static long hostMemoryBytes() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getTotalMemorySize();
    }

    /**
     * Reads a budget from a system property: a byte count, or a number with a binary unit ({@code KiB}, {@code MiB},
     * {@code GiB}, {@code TiB}, {@code PiB}; {@code K}, {@code M}, {@code G}, {@code T}, {@code P} the same), as the
     * CLI's byte options take; a value beyond a {@code long} is refused naming the property.
     */
    static long limitFrom(String property, String value, long otherwise) {
        if (value == null || value.isBlank()) {
            return otherwise;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)\\s*([KMGTP]?)(i?B)?", java.util.regex.Pattern.CASE_INSENSITIVE)
                .matcher(value.trim());
        if (m.matches()) {
            int shift = switch (m.group(2).toUpperCase(java.util.Locale.ROOT)) {
                case "K" -> 10;
                case "M" -> 20;
                case "G" -> 30;
                case "T" -> 40;
                case "P" -> 50;
                default -> 0;
            };
            try {
                long v = Long.parseLong(m.group(1));
                if (v <= (Long.MAX_VALUE >> shift)) {
                    return v << shift;
                }
            } catch (NumberFormatException e) {
                // too large: reported below
            }
        }
        throw new IllegalArgumentException(property + " must be a byte count >= 0 (e.g. 68719476736 or 64GiB), got '"
                + value + "'");
    }

    /**
     * Makes a child: its reservations are charged to it and to every ancestor, so it can never hold more than the
     * tightest limit on its way to the root.
     *
     * @param childName its name in messages, e.g. "loader /data/train #2"
     * @param childHostLimit its host budget, bytes, or {@link #UNLIMITED}
     * @param childDeviceLimit its device budget, bytes, or {@link #UNLIMITED}
     * @return the child, owned by the caller, who closes it
     * @throws IllegalArgumentException if a limit is negative
     * @throws IllegalStateException if this allocator is closed
     */
    public NativeAllocator newChild(String childName, long childHostLimit, long childDeviceLimit) {
        if (childHostLimit < 0 || childDeviceLimit < 0) {
            throw new IllegalArgumentException("allocator '" + childName + "': limits must be >= 0 bytes, got host "
                    + childHostLimit + ", device " + childDeviceLimit);
        }
        ensureOpen("make child '" + childName + "'");
        NativeAllocator c = new NativeAllocator(java.util.Objects.requireNonNull(childName, "childName"), this,
                childHostLimit, childDeviceLimit);
        children.add(c);
        return c;
    }

    /** @return the name */
    public String name() {
        return name;
    }

    /** @return the host budget, bytes ({@link #UNLIMITED} if none of its own) */
    public long hostLimit() {
        return hostLimit;
    }

    /** @return the device budget, bytes ({@link #UNLIMITED} if none of its own) */
    public long deviceLimit() {
        return deviceLimit;
    }

    /** @return true once {@link #close()} was called */
    public boolean isClosed() {
        return closed.get();
    }

    /** @return outstanding bytes by kind, counting descendants */
    public MemoryUsage usage() {
        return new MemoryUsage(name, hostLimit, deviceLimit, byKind.get(0), byKind.get(1), byKind.get(2), byKind.get(3),
                byKind.get(4));
    }

    /**
     * @param budget a budget
     * @return the bytes charged to it now, counting descendants: the one number its limit is compared against
     *     (read atomically, unlike the sums of a {@link #usage()} snapshot); 0 for {@link MemoryKind.Budget#NONE}
     */
    public long charged(MemoryKind.Budget budget) {
        AtomicLong c = counter(budget);
        return c == null ? 0 : c.get();
    }

    /** @return outstanding bytes of every kind, counting descendants (0 when everything came back) */
    public long outstandingBytes() {
        long n = 0;
        for (int k = 0; k < KINDS.length; k++) {
            n += byKind.get(k);
        }
        return n;
    }

    /**
     * Charges {@code bytes} of {@code kind} to this allocator and every ancestor: the accounting entry point every
     * native allocation or registration goes through. Call it before allocating, and
     * {@link Allocation#release()} after freeing (or if the allocation then fails).
     *
     * @param kind what is allocated or registered
     * @param bytes how many bytes, &ge; 0
     * @param description what it is, for the outstanding list, e.g. "pinned host buffer of 4096 bytes"
     * @return the reservation, owned by the buffer it accounts for
     * @throws MemoryBudgetException if this allocator or an ancestor would exceed its budget (nothing is charged)
     * @throws IllegalStateException if this allocator is closed
     * @throws IllegalArgumentException if bytes is negative
     */
    @SuppressWarnings("EnumOrdinal") // byKind is an AtomicLongArray indexed by MemoryKind.ordinal()
    public Allocation reserve(MemoryKind kind, long bytes, String description) {
        if (bytes < 0) {
            throw new IllegalArgumentException("cannot reserve " + bytes + " bytes of " + kind.label() + " memory");
        }
        ensureOpen("reserve " + bytes + " bytes of " + kind.label() + " memory for " + description);
        for (NativeAllocator a = this; a != null; a = a.parent) {
            if (!a.tryCharge(kind.budget(), bytes)) {
                for (NativeAllocator b = this; b != a; b = b.parent) {
                    b.charge(kind.budget(), -bytes);
                }
                throw a.exceeded(kind, bytes, description, this);
            }
        }
        for (NativeAllocator a = this; a != null; a = a.parent) {
            a.byKind.addAndGet(kind.ordinal(), bytes);
        }
        Allocation al = new Allocation(this, kind, bytes, description, LeakDetector.allocationSite());
        ledger.add(al);
        return al;
    }

    /**
     * Checks, without charging, that {@code bytes} of {@code kind} would fit now under this allocator's and every
     * ancestor's budget: for a caller about to make several allocations that should refuse before making any
     * (a loader's ring). Concurrent reservations may still take the room.
     *
     * @param kind the kind that would be reserved
     * @param bytes how many bytes in all
     * @param description what for, e.g. "prefetch depth 4 x 150.0 MiB slots"
     * @throws MemoryBudgetException as {@link #reserve} would
     */
    public void checkAvailable(MemoryKind kind, long bytes, String description) {
        for (NativeAllocator a = this; a != null; a = a.parent) {
            AtomicLong c = a.counter(kind.budget());
            if (c != null && bytes > a.limit(kind.budget()) - c.get()) {
                throw a.exceeded(kind, bytes, description, this);
            }
        }
    }

    private AtomicLong counter(MemoryKind.Budget budget) {
        return switch (budget) {
            case HOST -> hostCharged;
            case DEVICE -> deviceCharged;
            case NONE -> null;
        };
    }

    private long limit(MemoryKind.Budget budget) {
        return budget == MemoryKind.Budget.DEVICE ? deviceLimit : hostLimit;
    }

    private boolean tryCharge(MemoryKind.Budget budget, long bytes) {
        AtomicLong c = counter(budget);
        if (c == null) {
            return true;
        }
        long limit = limit(budget);
        while (true) {
            long cur = c.get();
            if (bytes > limit - cur) {
                return false;
            }
            if (c.compareAndSet(cur, cur + bytes)) {
                return true;
            }
        }
    }

    private void charge(MemoryKind.Budget budget, long bytes) {
        AtomicLong c = counter(budget);
        if (c != null) {
            c.addAndGet(bytes);
        }
    }

    private MemoryBudgetException exceeded(MemoryKind kind, long bytes, String description, NativeAllocator requester) {
        MemoryKind.Budget budget = kind.budget();
        long limit = limit(budget);
        long held = counter(budget).get();
        StringBuilder sb = new StringBuilder("native memory budget exceeded: allocator '").append(name).append("' has a ")
                .append(budget.name().toLowerCase(java.util.Locale.ROOT)).append(" budget of ").append(MemoryUsage.size(limit))
                .append(", ").append(MemoryUsage.size(held)).append(" of it outstanding; the request of ")
                .append(MemoryUsage.size(bytes)).append(' ').append(kind.label()).append(" memory (").append(description)
                .append(") by '").append(requester.name).append("' does not fit. Held by: ");
        List<String> holders = new ArrayList<>();
        long own = 0;
        for (Allocation a : ledger) {
            own += a.kind.budget() == budget ? a.bytes : 0;
        }
        if (own > 0) {
            holders.add("'" + name + "' itself " + MemoryUsage.size(own));
        }
        for (NativeAllocator c : children) {
            long b = c.counter(budget).get();
            if (b > 0) {
                holders.add("'" + c.name + "' " + MemoryUsage.size(b) + " (" + c.usage() + ")");
            }
        }
        sb.append(holders.isEmpty() ? "nobody" : String.join("; ", holders));
        if (parent == null && budget == MemoryKind.Budget.HOST && limit != UNLIMITED) {
            sb.append(". The root's host budget is half of this machine's memory unless -D").append(HOST_LIMIT_PROPERTY)
                    .append(" says otherwise");
        }
        return new MemoryBudgetException(sb.toString(), name, limit, bytes);
    }

    private void ensureOpen(String what) {
        if (closed.get()) {
            throw new IllegalStateException("allocator '" + name + "' is closed: cannot " + what);
        }
    }

    /**
     * Lists what is outstanding here and in every descendant, one allocation per line with its kind, bytes,
     * description and, where leak detection recorded it, its allocation site.
     *
     * @return the list; empty when nothing is outstanding
     */
    public String describeOutstanding() {
        StringBuilder sb = new StringBuilder();
        describeOutstanding(sb, "");
        return sb.toString();
    }

    private void describeOutstanding(StringBuilder sb, String indent) {
        List<Allocation> own = new ArrayList<>(ledger);
        own.sort(Comparator.comparingLong(a -> a.serial));
        for (Allocation a : own) {
            sb.append(indent).append("  ").append(a.kind.label()).append(' ').append(MemoryUsage.size(a.bytes)).append(": ")
                    .append(a.description).append(" in '").append(name).append('\'');
            if (a.site != null) {
                sb.append('\n').append(stack(a.site).indent(indent.length() + 4).stripTrailing());
            } else {
                sb.append(" (allocation site not recorded: -D").append(LeakDetector.LEVEL_PROPERTY).append("=paranoid records it)");
            }
            sb.append('\n');
        }
        for (NativeAllocator c : children) {
            if (c.outstandingBytes() > 0 || !c.closed.get()) {
                sb.append(indent).append("  child '").append(c.name).append('\'').append(c.closed.get() ? " (closed)" : " (open)")
                        .append(": ").append(c.usage()).append('\n');
                c.describeOutstanding(sb, indent + "  ");
            }
        }
    }

    /**
     * Closes this allocator. With nothing outstanding and no open child it detaches from its parent. Otherwise it
     * throws, listing what is outstanding; it counts as closed either way (no new reservations), and buffers
     * still outstanding return their bytes through it when they are freed later. Idempotent.
     *
     * @throws IllegalStateException "Memory was leaked by allocator ..." listing every outstanding allocation and
     *     open child; or if this is the process root, which is never closed
     */
    @Override
    public void close() {
        if (this == RootHolder.ROOT) {
            throw new IllegalStateException("the process root allocator is never closed");
        }
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<NativeAllocator> open = children.stream().filter(c -> !c.closed.get()).toList();
        if (!ledger.isEmpty() || !open.isEmpty() || outstandingBytes() > 0) {
            throw new IllegalStateException("Memory was leaked by allocator '" + name + "': " + usage()
                    + (open.isEmpty() ? "" : "; " + open.size() + " child allocator(s) still open") + "; outstanding:\n"
                    + describeOutstanding());
        }
        if (parent != null) {
            parent.children.remove(this);
        }
    }

    @Override
    public String toString() {
        return "allocator '" + name + "' (host limit " + MemoryUsage.size(hostLimit) + ", device limit "
                + MemoryUsage.size(deviceLimit) + "; " + usage() + ")";
    }

    static String stack(Throwable site) {
        StringBuilder sb = new StringBuilder(site.toString().replace("java.lang.Throwable: ", ""));
        for (StackTraceElement e : site.getStackTrace()) {
            sb.append("\n\tat ").append(e);
        }
        return sb.toString();
    }

    private static final AtomicLong SERIALS = new AtomicLong();

    /**
     * One reservation: bytes of one kind charged to an allocator and its ancestors, held by the buffer or
     * registration it accounts for. {@link #release()} returns them, once; thread-safe.
     */
    public static final class Allocation {
        private final NativeAllocator owner;
        private final MemoryKind kind;
        private final long bytes;
        private final String description;
        private final Throwable site;
        private final long serial = SERIALS.incrementAndGet();
        private final AtomicBoolean released = new AtomicBoolean();

        private Allocation(NativeAllocator owner, MemoryKind kind, long bytes, String description, Throwable site) {
            this.owner = owner;
            this.kind = kind;
            this.bytes = bytes;
            this.description = description;
            this.site = site;
        }

        /** @return the allocator it is charged to */
        public NativeAllocator allocator() {
            return owner;
        }

        /** @return its kind */
        public MemoryKind kind() {
            return kind;
        }

        /** @return its size, bytes */
        public long bytes() {
            return bytes;
        }

        /**
         * @return where it was allocated, when leak detection sampled it ({@link LeakDetector}); null otherwise
         */
        public Throwable site() {
            return site;
        }

        /** Returns the bytes to the allocator and every ancestor; later calls do nothing. */
        @SuppressWarnings("EnumOrdinal") // byKind is an AtomicLongArray indexed by MemoryKind.ordinal()
        public void release() {
            if (released.compareAndSet(false, true)) {
                // counts go down before the budget does (and up after it, in reserve), so what usage() shows never
                // exceeds what the budget holds
                for (NativeAllocator a = owner; a != null; a = a.parent) {
                    a.byKind.addAndGet(kind.ordinal(), -bytes);
                    a.charge(kind.budget(), -bytes);
                }
                owner.ledger.remove(this);
            }
        }
    }
}
