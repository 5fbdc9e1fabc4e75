package dev.gdsloader.service.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.formats.DType;
import dev.gdsloader.service.protocol.BatchSchema;
import dev.gdsloader.service.protocol.Delivery;
import dev.gdsloader.service.protocol.Protocol;
import dev.gdsloader.service.protocol.Request;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * {@link Delivery#HOST} on the client: each endpoint's stream is a {@code DoGet} read by a {@link DoGetReader}, and
 * each record batch becomes a {@link RemoteBatch} whose columns are read-only views of the received Arrow data buffers
 * (retained until the batch is released; no copy but BOOL, unpacked from Arrow's bitmap). The views are over a shared
 * {@link Arena} closed when the batch is released, so a view read after that throws instead of reading freed memory.
 * The consumer's thread only.
 */
final class HostDelivery implements ClientDelivery {
    private final ClientContext context;

    HostDelivery(ClientContext context) {
        this.context = context;
    }

    @Override
    public Stream open(Endpoints.Target t, Connection c, Request r, boolean fromStart) {
        DoGetReader reader = new DoGetReader(c.channel(), t.ticket(r), context.allocator());
        return new Stream() {
            @Override
            public StreamReader reader() {
                return reader;
            }

            @Override
            public RemoteBatch batch(JsonNode meta) {
                return hostBatch(reader.root(), meta);
            }

            @Override
            public boolean endMessage(long epoch, boolean keepForNextEpoch) {
                return false; // a DoGet ends with the stream: nothing to keep
            }

            @Override
            public void drop() {
                reader.close();
            }
        };
    }

    @Override
    public void close() {
        // nothing is kept between epochs
    }

    /** A host batch over the stream's current record batch: each column's data buffer retained (no copy but BOOL). */
    // restricted: a view of received Arrow memory scoped to the batch (MemorySegment.reinterpret), --enable-native-access
    // MustBeClosedChecker: the batch's arena is closed by the batch's release, not in this method
    @SuppressWarnings({"restricted", "MustBeClosedChecker"})
    private RemoteBatch hostBatch(VectorSchemaRoot root, JsonNode meta) {
        int rows = root.getRowCount();
        List<ArrowBuf> retained = new ArrayList<>();
        Arena scope = Arena.ofShared();
        RemoteBatch b = new RemoteBatch(meta.path("epoch").asLong(), meta.path("index").asLong(), BatchSchema.records(root),
                meta.path("padding").asInt(), Delivery.HOST, meta.path("state"), null, (batch, stream) -> {
                    scope.close(); // every view handed out now throws instead of reading freed memory
                    for (ArrowBuf buf : retained) {
                        buf.getReferenceManager().release();
                    }
                    context.held().remove(batch);
                });
        try {
            List<RemoteColumn> cols = new ArrayList<>();
            for (FieldVector v : root.getFieldVectors()) {
                Field f = v.getField();
                if (f.getName().equals(Protocol.RECORD_COLUMN) || f.getName().equals(Protocol.PADDING_COLUMN)) {
                    continue;
                }
                DType t = BatchSchema.dtype(f);
                long[] rs = BatchSchema.recordShape(f);
                long n = BatchSchema.elements(rs);
                long[] shape = new long[rs.length + 1];
                shape[0] = rows;
                System.arraycopy(rs, 0, shape, 1, rs.length);
                long bytes = rows * n * t.itemSize();
                FieldVector values = v instanceof FixedSizeListVector l ? l.getDataVector() : v;
                MemorySegment host;
                if (t == DType.BOOL) {
                    BitVector bits = (BitVector) values;
                    int boolBytes = Math.toIntExact(bytes);
                    host = scope.allocate(boolBytes);
                    for (int i = 0; i < boolBytes; i++) {
                        host.set(ValueLayout.JAVA_BYTE, i, (byte) bits.get(i));
                    }
                } else {
                    ArrowBuf data = values.getDataBuffer();
                    if (data.capacity() < bytes) {
                        throw new PrefetchServiceException("column '" + f.getName() + "' has " + data.capacity()
                                + " bytes, expected " + bytes, null, FlightStatusCode.INTERNAL);
                    }
                    data.getReferenceManager().retain();
                    retained.add(data);
                    host = bytes == 0 ? scope.allocate(0) : MemorySegment.ofAddress(data.memoryAddress()).reinterpret(bytes, scope, null);
                }
                ByteBuffer view = host.asByteBuffer().asReadOnlyBuffer();
                cols.add(RemoteColumn.host(b, f.getName(), t, shape, bytes, view));
            }
            b.columns(cols);
        } catch (RuntimeException e) {
            b.close(); // releases the buffers retained so far
            throw e;
        }
        context.held().add(b);
        return b;
    }
}
