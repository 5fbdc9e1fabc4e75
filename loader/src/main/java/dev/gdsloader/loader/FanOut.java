package dev.gdsloader.loader;

import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;

/**
 * Hands one source's items to every member of a group in the same order: each pull from the source gives one item per
 * member (member m's copy of one batch), queued per member. A member whose queue is empty pulls the next items
 * itself, so the fastest member drives the source and the others find their items waiting; a slow member holds its
 * items back, and with them the source's slots, which is what paces the group.
 *
 * <p>Thread-safe: one consumer thread per member. One member pulls at a time (outside the queues' monitor); a member
 * with queued items never waits for a pull. The source's end (a null pull) and its failure reach every member once its queue is empty.
 *
 * @param <T> an item (a member's batch)
 */
final class FanOut<T> {
    /** Where items come from. */
    interface Source<T> {
        /**
         * @return the next items, one per member in member order; null at the end
         */
        List<T> pull();
    }

    private final int members;
    private final Source<T> source;
    private final Object queues = new Object();
    private final List<ArrayDeque<T>> queued;
    private boolean ended;
    private boolean pulling;
    private RuntimeException failure;

    /**
     * @param members members, &ge; 1
     * @param source the items' source, pulled by the members' threads one at a time
     */
    FanOut(int members, Source<T> source) {
        if (members < 1) {
            throw new IllegalArgumentException("a fan-out has >= 1 member, got " + members);
        }
        this.members = members;
        this.source = source;
        List<ArrayDeque<T>> q = new java.util.ArrayList<>();
        for (int m = 0; m < members; m++) {
            q.add(new ArrayDeque<>());
        }
        this.queued = List.copyOf(q);
    }

    /** @return members */
    int members() {
        return members;
    }

    /**
     * Member {@code m}'s next item: a queued one, else it pulls the next items itself, or, while another member pulls,
     * waits until that pull queued an item for it (never waiting for a pull while it has items queued: a pull may be
     * waiting for the very slots those items hold).
     *
     * @param m the member
     * @return the item, or null at the end
     * @throws RuntimeException the source's failure (to every member, once its queue is empty)
     * @throws IllegalStateException if the thread is interrupted while waiting
     */
    T next(int m) {
        java.util.Objects.checkIndex(m, members);
        synchronized (queues) {
            while (true) {
                T t = queued.get(m).poll();
                if (t != null) {
                    return t;
                }
                if (failure != null) {
                    throw failure;
                }
                if (ended) {
                    return null;
                }
                if (!pulling) {
                    pulling = true;
                    break;
                }
                try {
                    queues.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while member " + m + " waited for its next batch", e);
                }
            }
        }
        List<T> items;
        try {
            items = source.pull(); // outside the monitor: members with queued items take them meanwhile
        } catch (RuntimeException | Error e) {
            synchronized (queues) {
                pulling = false;
                failure = e instanceof RuntimeException r ? r : new IllegalStateException(e.getMessage(), e);
                queues.notifyAll();
            }
            throw e;
        }
        synchronized (queues) {
            pulling = false;
            queues.notifyAll();
            if (items == null) {
                ended = true;
                return null;
            }
            if (items.size() != members) {
                failure = new IllegalStateException("fan-out source gave " + items.size() + " items for " + members + " members");
                throw failure;
            }
            for (int k = 0; k < members; k++) {
                if (k != m) {
                    queued.get(k).add(items.get(k));
                }
            }
            return items.get(m);
        }
    }

    /** @return items queued for member {@code m}, not yet taken */
    int queued(int m) {
        synchronized (queues) {
            return queued.get(m).size();
        }
    }
    /**
     * Takes every queued item out, for disposal (items pulled for members that never took them).
     *
     * @param dispose called once per item, member by member, in order
     */
    void drain(Consumer<T> dispose) {
        while (true) {
            T t = null;
            synchronized (queues) {
                for (ArrayDeque<T> q : queued) {
                    if (!q.isEmpty()) {
                        t = q.poll();
                        break;
                    }
                }
                ended = true;
            }
            if (t == null) {
                return;
            }
            dispose.accept(t);
        }
    }
}
