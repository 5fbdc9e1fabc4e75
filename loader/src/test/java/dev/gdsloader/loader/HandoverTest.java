package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The epoch's typed hand-over: entries in order, then the reader's failure once, then the end; a stop wakes a take. */
class HandoverTest {
    /** An entry with only its position: the hand-over never looks further. */
    private static RingEntry entry(int index) {
        return new RingEntry(index, null, null, new SlotColumn[0], null);
    }

    private static CompletableFuture<Handover.Item> takeLater(Handover h) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return h.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CompletionException(e);
            }
        });
    }

    @Test
    void aWaitingTakeGetsTheEntryPutLater() throws Exception {
        Handover h = new Handover(2);
        assertNull(h.poll(), "nothing yet: poll does not wait");
        CompletableFuture<Handover.Item> taken = takeLater(h);
        RingEntry e = entry(1);
        h.put(e);
        assertSame(e, taken.get(30, TimeUnit.SECONDS));
    }

    @Test
    void entriesComeFirstThenTheFailureOnceThenTheEnd() throws Exception {
        Handover h = new Handover(2);
        RingEntry a = entry(0);
        RingEntry b = entry(1);
        h.put(a);
        h.put(b);
        IllegalStateException cause = new IllegalStateException("slot 1: planning failed");
        h.fail(cause);
        h.end(); // the reader's last word after its failure changes nothing
        assertSame(a, h.take());
        assertSame(b, h.poll());
        assertSame(cause, assertInstanceOf(Handover.Failed.class, h.take()).cause());
        assertSame(Handover.End.END, h.take());
        assertSame(Handover.End.END, h.poll(), "the end stays");
    }

    @Test
    void aStopWakesAWaitingTakeWithTheEnd() throws Exception {
        Handover h = new Handover(1);
        CompletableFuture<Handover.Item> taken = takeLater(h);
        h.stop();
        assertSame(Handover.End.END, taken.get(30, TimeUnit.SECONDS));
    }

    @Test
    void moreEntriesThanTheRingHoldsAreRefused() throws InterruptedException {
        Handover h = new Handover(1);
        h.put(entry(0));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> h.put(entry(1)));
        assertEquals("hand-over of slot 1: all 1 entries of the ring are already queued", e.getMessage());
        h.end();
        assertEquals(0, assertInstanceOf(RingEntry.class, h.take()).index);
        IllegalStateException late = assertThrows(IllegalStateException.class, () -> h.put(entry(2)));
        assertEquals("hand-over of slot 2: the reader already ended", late.getMessage());
    }
}
