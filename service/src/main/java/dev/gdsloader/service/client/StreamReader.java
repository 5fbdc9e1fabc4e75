package dev.gdsloader.service.client;

import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What an epoch's stream is read through: a {@link DoGetReader} (HOST delivery) or the reader of a CUDA_IPC exchange
 * (Flight's {@link FlightStream}). One consumer thread; {@link #cancel} from any thread.
 */
interface StreamReader extends AutoCloseable {
    /** @return false at the end of the stream; throws the call's error as a {@link FlightRuntimeException} */
    boolean next();

    /** @return the root holding the last batch */
    VectorSchemaRoot root();

    /** @return the last batch's app_metadata, or null */
    byte[] metadata();

    /**
     * Cancels the call: {@link #next()} throws CANCELLED. Any thread.
     *
     * @param why the reason
     */
    void cancel(String why);

    @Override
    void close();

    /**
     * @param s a Flight stream, owned by the caller's exchange
     * @return {@code s} as a reader
     */
    static StreamReader of(FlightStream s) {
        return new StreamReader() {
            @Override
            public boolean next() {
                return s.next();
            }

            @Override
            public VectorSchemaRoot root() {
                return s.getRoot();
            }

            @Override
            public byte[] metadata() {
                ArrowBuf m = s.getLatestMetadata();
                if (m == null) {
                    return null;
                }
                byte[] bytes = new byte[(int) m.readableBytes()];
                m.getBytes(m.readerIndex(), bytes);
                return bytes;
            }

            @Override
            public void cancel(String why) {
                s.cancel(why, null);
            }

            @Override
            public void close() {
                try {
                    s.close();
                } catch (Exception e) {
                    Logger.getLogger(StreamReader.class.getName()).log(Level.FINE, "gdsloader: closing a stream", e);
                }
            }
        };
    }
}
