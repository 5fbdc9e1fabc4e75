package dev.gdsloader.formats.arrow;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Where each top-level column of a schema starts among a record batch's field nodes and buffers (Arrow columnar format,
 * "Buffer layout": fields in pre-order), and which column a name gives, computed once per file. A lookup costs O(1),
 * so a file's columns cost time linear in their number: scanning the schema for every column made a file of 10,000
 * columns take minutes to open (issue 21, finding 12).
 *
 * <p>Immutable and thread-safe.
 */
final class ArrowFieldIndex {
    private final List<Field> fields;
    private final Map<String, Integer> byName;
    private final int[] nodeStart;
    private final int[] bufferStart;
    private final int nodes;
    private final int buffers;

    /** @param schema the file's schema */
    ArrowFieldIndex(Schema schema) {
        this.fields = schema.getFields();
        this.byName = new HashMap<>(fields.size() * 2);
        this.nodeStart = new int[fields.size()];
        this.bufferStart = new int[fields.size()];
        int node = 0;
        int buffer = 0;
        for (int i = 0; i < fields.size(); i++) {
            Field f = fields.get(i);
            byName.putIfAbsent(f.getName(), i); // the first column of a name, as a scan from the start finds it
            nodeStart[i] = node;
            bufferStart[i] = buffer;
            node += nodes(f);
            buffer += buffers(f);
        }
        this.nodes = node;
        this.buffers = buffer;
    }

    /** @return the top-level fields, in schema order */
    List<Field> fields() {
        return fields;
    }

    /**
     * @param name a column name
     * @return the index of the first top-level field of that name, or -1 if none
     */
    int indexOf(String name) {
        Integer i = byName.get(name);
        return i == null ? -1 : i;
    }

    /**
     * @param field a top-level field index
     * @return its first field node in a record batch
     */
    int nodeStart(int field) {
        return nodeStart[field];
    }

    /**
     * @param field a top-level field index
     * @return its first buffer in a record batch
     */
    int bufferStart(int field) {
        return bufferStart[field];
    }

    /** @return field nodes a record batch needs for the whole schema */
    int nodes() {
        return nodes;
    }

    /** @return buffers a record batch needs for the whole schema */
    int buffers() {
        return buffers;
    }

    /** Field nodes of a field in pre-order: itself and its descendants (Arrow columnar format, "Buffer layout"). */
    static int nodes(Field f) {
        if (f.getDictionary() != null) {
            return 1; // a dictionary-encoded field is its indices in the batch; the values are in the dictionary batch
        }
        int n = 1;
        for (Field c : f.getChildren()) {
            n += nodes(c);
        }
        return n;
    }

    /** Buffers of a field and its descendants, from Arrow Java's own layout table ({@link TypeLayout}). */
    static int buffers(Field f) {
        if (f.getDictionary() != null) {
            return 2; // validity and the integer indices
        }
        int n = TypeLayout.getTypeBufferCount(f.getType());
        for (Field c : f.getChildren()) {
            n += buffers(c);
        }
        return n;
    }
}
