package dev.gdsloader.service.client;

import dev.gdsloader.service.protocol.Messages;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.HasByteBuffer;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.grpc.StatusUtils;
import org.apache.arrow.flight.impl.FlightServiceGrpc;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * The client side of one Flight {@code DoGet} (HOST delivery), reading each message's body with <b>one copy</b>, from
 * gRPC's received network buffers straight into a direct Arrow buffer.
 *
 * <p>Why not {@code FlightClient.getStream}: Flight Java's receive path ({@code ArrowMessage.frame} through
 * {@code GetReadableBuffer.readIntoBuffer}, Flight 19.0.0) allocates a heap {@code byte[]} of the body's size per
 * message, copies the body into it and then copies that into the Arrow buffer (apache/arrow-java#835): two copies and
 * a humongous heap array per batch, the largest cost of a client in a JFR profile of {@code serve-bench}. This reader
 * is the same RPC ({@code arrow.flight.protocol.FlightService/DoGet}, the same FlightData messages, the server
 * unchanged) with its own response marshaller: the body is copied chunk by chunk from gRPC's buffers
 * ({@link HasByteBuffer}), the data header is parsed by Arrow's {@link MessageSerializer} and the batch loaded into
 * one {@link VectorSchemaRoot}, as {@code FlightStream} does.
 *
 * <p>Flow control: the call asks gRPC for {@link #AHEAD} messages beyond the one being consumed (gRPC parses those as
 * they arrive, on its executor), and one more per message consumed; what is not yet asked for stays within the
 * HTTP/2 flow-control window. So at most {@code AHEAD + 1} batch bodies are held here besides those the consumer
 * retains.
 *
 * <p>Ownership: the reader owns its call, its root and the messages received and not yet consumed; {@link #close()}
 * cancels the call if it has not ended and frees them. Buffers the consumer retained from the root stay valid until
 * released. {@link #next()}, {@link #root()}, {@link #metadata()} and {@link #close()}: one consumer thread;
 * {@link #cancel} may be called from any thread.
 */
final class DoGetReader implements StreamReader {
    private static final Logger LOG = Logger.getLogger(DoGetReader.class.getName());
    /** Messages asked for ahead of the consumer. */
    static final int AHEAD = 3;
    /** How long {@link #close()} waits for a cancelled call's end, ms. */
    private static final long CLOSE_MILLIS = 5_000;

    /** FlightData's fields (Flight.proto), as protobuf tags of length-delimited values. */
    private static final int DESCRIPTOR_TAG = (1 << 3) | 2;
    private static final int HEADER_TAG = (2 << 3) | 2;
    private static final int APP_METADATA_TAG = (3 << 3) | 2;
    private static final int BODY_TAG = (1000 << 3) | 2;

    /** One FlightData message: the Arrow IPC header, the body (owned until handed on) and the app metadata. */
    @SuppressWarnings("ArrayRecordComponent") // one message's parts, never compared
    private record Received(MessageMetadataResult header, ArrowBuf body, byte[] appMetadata) {
        void release() {
            if (body != null) {
                body.close();
            }
        }
    }

    /** The end of the call: {@code status} OK, or the error. */
    private record End(Status status, Metadata trailers) {
    }

    private final BufferAllocator allocator;
    private final ClientCall<byte[], Received> call;
    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final Object lock = new Object();
    private boolean closed;
    private End end;
    private VectorSchemaRoot root;
    private byte[] metadata;

    /**
     * Starts the call.
     *
     * @param channel the connection (with the client's TLS and bearer-token interceptor, where set)
     * @param ticket the ticket bytes
     * @param allocator where bodies and the root are allocated (the client's)
     */
    DoGetReader(Channel channel, byte[] ticket, BufferAllocator allocator) {
        this.allocator = allocator;
        MethodDescriptor<byte[], Received> method = MethodDescriptor.<byte[], Received>newBuilder()
                .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
                .setFullMethodName(FlightServiceGrpc.getDoGetMethod().getFullMethodName())
                .setRequestMarshaller(new TicketMarshaller())
                .setResponseMarshaller(new FlightDataParser(allocator))
                .build();
        this.call = channel.newCall(method, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(Received m) {
                synchronized (lock) {
                    if (!closed) {
                        queue.add(m);
                        return;
                    }
                }
                m.release();
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                queue.add(new End(status, trailers));
            }
        }, new Metadata());
        call.sendMessage(ticket);
        call.halfClose();
        call.request(AHEAD + 1);
    }

    /**
     * Waits for the next record batch and loads it into {@link #root()} (the root's previous buffers are released:
     * retain what you keep).
     *
     * @return false at the end of the stream
     * @throws FlightRuntimeException the call's error status (CANCELLED after {@link #cancel})
     * @throws IllegalStateException if the server sent something that is not a schema followed by record batches
     */
    @Override
    public boolean next() {
        while (true) {
            if (end != null) {
                return endOrThrow();
            }
            Object o;
            try {
                o = queue.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                call.cancel("interrupted", e);
                throw StatusUtils.fromThrowable(Status.CANCELLED.withDescription("interrupted").withCause(e).asRuntimeException());
            }
            if (o instanceof End e) {
                end = e;
                continue;
            }
            Received m = (Received) o;
            call.request(1);
            try {
                byte type = m.header() == null ? MessageHeader.NONE : m.header().headerType();
                if (type == MessageHeader.Schema) {
                    if (root != null) {
                        throw new IllegalStateException("the server sent a second schema in one DoGet stream");
                    }
                    root = VectorSchemaRoot.create(MessageSerializer.deserializeSchema(m.header()), allocator);
                } else if (type == MessageHeader.RecordBatch) {
                    if (root == null) {
                        throw new IllegalStateException("the server sent a record batch before its schema");
                    }
                    m.body().getReferenceManager().retain(); // deserializeRecordBatch consumes one reference
                    try (ArrowRecordBatch rb = MessageSerializer.deserializeRecordBatch(m.header().getMessage(), m.body())) {
                        new VectorLoader(root).load(rb);
                    }
                    metadata = m.appMetadata();
                    return true;
                } else {
                    throw new IllegalStateException("the server sent a DoGet message of Arrow header type " + type
                            + ", expected a schema and then record batches");
                }
            } catch (IOException e) {
                throw new UncheckedIOException("a record batch of the DoGet stream could not be read: " + e.getMessage(), e);
            } finally {
                m.release(); // the record batch's buffers hold their own references on the body
            }
        }
    }

    private boolean endOrThrow() {
        if (end.status().isOk()) {
            return false;
        }
        throw StatusUtils.fromGrpcRuntimeException(end.status().asRuntimeException(end.trailers()));
    }

    /** @return the root the last batch was loaded into (reused for every batch), or null before the first */
    @Override
    public VectorSchemaRoot root() {
        return root;
    }

    /** @return the last batch's app_metadata bytes, or null if it had none */
    @Override
    public byte[] metadata() {
        return metadata;
    }

    /**
     * Cancels the call: a {@link #next()} waiting or to come throws CANCELLED with {@code why}. Any thread.
     *
     * @param why the reason
     */
    @Override
    public void cancel(String why) {
        call.cancel(why, null);
    }

    /**
     * Cancels the call if it has not ended and waits (up to 5 s) for its end, letting gRPC deliver what it still holds
     * (as {@code FlightStream.close} drains); frees the messages not consumed and the root. Idempotent.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (end == null) {
            call.cancel("the client closed the stream", null);
            // a call whose server already ended it keeps the messages it received until they are asked for (gRPC
            // reports the end after them): ask for all, so gRPC parses and frees them, and wait for the end
            call.request(Integer.MAX_VALUE);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_MILLIS);
            try {
                while (end == null) {
                    Object o = queue.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    if (o == null) {
                        LOG.warning("gdsloader: a closed DoGet stream did not end within " + CLOSE_MILLIS + " ms");
                        break;
                    }
                    if (o instanceof End e) {
                        end = e;
                    } else {
                        ((Received) o).release();
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Object o; (o = queue.poll()) != null; ) {
            if (o instanceof Received m) {
                m.release();
            }
        }
        if (root != null) {
            root.close();
        }
    }

    /** The request: a Flight {@code Ticket} message (field 1, the ticket's bytes). */
    private static final class TicketMarshaller implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] ticket) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(ticket.length + 6);
            out.write((1 << 3) | 2);
            writeVarint(out, ticket.length);
            out.writeBytes(ticket);
            return new ByteArrayInputStream(out.toByteArray());
        }

        @Override
        public byte[] parse(InputStream stream) {
            throw new UnsupportedOperationException("a client does not receive tickets");
        }
    }

    /** Parses FlightData, the body with one copy into a direct buffer of the client's allocator. */
    private static final class FlightDataParser implements MethodDescriptor.Marshaller<Received> {
        private final BufferAllocator allocator;

        FlightDataParser(BufferAllocator allocator) {
            this.allocator = allocator;
        }

        @Override
        public InputStream stream(Received value) {
            throw new UnsupportedOperationException("a client does not send FlightData on DoGet");
        }

        @Override
        public Received parse(InputStream in) {
            MessageMetadataResult header = null;
            ArrowBuf body = null;
            byte[] app = null;
            try {
                for (int first; (first = in.read()) != -1; ) {
                    int tag = readVarint(first, in);
                    if ((tag & 7) != 2) {
                        throw new IOException("unexpected protobuf tag " + tag + " (wire type " + (tag & 7)
                                + "), expected FlightData's length-delimited fields");
                    }
                    int size = readVarint(in.read(), in);
                    switch (tag) {
                        case HEADER_TAG -> {
                            byte[] h = in.readNBytes(size);
                            checkLength(h.length, size, "data_header");
                            header = MessageMetadataResult.create(ByteBuffer.wrap(h), size);
                        }
                        case APP_METADATA_TAG -> {
                            app = in.readNBytes(size);
                            checkLength(app.length, size, "app_metadata");
                        }
                        case BODY_TAG -> {
                            if (body != null) {
                                body.close(); // the last one counts, as in Flight
                            }
                            body = size == 0 ? allocator.getEmpty() : allocator.buffer(size);
                            readInto(in, body, size);
                        }
                        case DESCRIPTOR_TAG -> skip(in, size, tag); // only on a schema message, not used here
                        default -> skip(in, size, tag);
                    }
                }
                if (body == null && header != null && header.headerType() == MessageHeader.RecordBatch) {
                    body = allocator.getEmpty(); // protobuf may leave an empty body out
                }
                return new Received(header, body, app);
            } catch (IOException | RuntimeException e) {
                if (body != null) {
                    body.close();
                }
                throw Status.INTERNAL.withDescription("a FlightData message of the DoGet stream could not be read: "
                        + e.getMessage()).withCause(e).asRuntimeException();
            }
        }

        /** Copies {@code size} bytes of {@code in} into {@code body}: from gRPC's buffers where it lends them. */
        private static void readInto(InputStream in, ArrowBuf body, int size) throws IOException {
            long at = 0;
            HasByteBuffer direct = in instanceof HasByteBuffer h && h.byteBufferSupported() ? h : null;
            byte[] chunk = null;
            while (at < size) {
                ByteBuffer b = direct != null ? direct.getByteBuffer() : null;
                int n;
                if (b != null) {
                    n = (int) Math.min(size - at, b.remaining());
                    body.setBytes(at, b.slice(b.position(), n));
                    long skipped = in.skip(n);
                    if (skipped != n) {
                        throw new IOException("skipped " + skipped + " of " + n + " bytes of the body");
                    }
                } else {
                    if (chunk == null) {
                        chunk = new byte[Math.min(size, 1 << 16)];
                    }
                    n = in.read(chunk, 0, (int) Math.min(size - at, chunk.length));
                    if (n < 0) {
                        throw new IOException("the message ended " + (size - at) + " bytes before its body's end");
                    }
                    body.setBytes(at, chunk, 0, n);
                }
                at += n;
            }
            body.writerIndex(size);
        }

        private static void skip(InputStream in, int size, int tag) throws IOException {
            checkLength(in.skip(size), size, "field with tag " + tag); // the descriptor, or a field added later
        }

        private static void checkLength(long got, int size, String what) throws IOException {
            if (got != size) {
                throw new IOException(what + ": " + got + " bytes, expected " + size);
            }
        }
    }

    private static int readVarint(int first, InputStream in) throws IOException {
        if (first < 0) {
            throw new IOException("the message ended inside a protobuf varint");
        }
        int result = first & 0x7f;
        int b = first;
        for (int shift = 7; (b & 0x80) != 0; shift += 7) {
            if (shift > 28) {
                throw new IOException("a protobuf varint longer than 5 bytes");
            }
            b = in.read();
            if (b < 0) {
                throw new IOException("the message ended inside a protobuf varint");
            }
            result |= (b & 0x7f) << shift;
        }
        if (result < 0) {
            throw new IOException("a protobuf length over 2 GiB");
        }
        return result;
    }

    private static void writeVarint(ByteArrayOutputStream out, int v) {
        while ((v & ~0x7f) != 0) {
            out.write((v & 0x7f) | 0x80);
            v >>>= 7;
        }
        out.write(v);
    }
}
