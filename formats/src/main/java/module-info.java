/**
 * Pure-Java shard formats ({@code .npy}/{@code .npz}, safetensors, Arrow IPC, raw records, IDX), the
 * {@code dataset.json} manifest and the registry that maps suffixes to readers: the byte extents of records, without
 * reading the data. Every package is API (readers for the loader, writers for the benchmarks' synthetic datasets).
 *
 * <p>Jackson 2.23 ({@code com.fasterxml.jackson.core}, {@code .databind}) and Arrow 19 ({@code org.apache.arrow.vector},
 * {@code .memory.core}, {@code .format}, {@code .compression}) and Commons Compress ship real module descriptors
 * (Jackson's and Commons Compress's under {@code META-INF/versions/9}). Arrow's classes carry Checker Framework
 * annotations, read at compile time only ({@code requires static}). Arrow's own {@code flatbuffers-java} is an
 * automatic module named from its file name (Arrow requires it, not this module).
 */
module dev.gdsloader.formats {
    // the API hands out Jackson's JsonNode (JsonDocument) and Arrow's ArrowType/Schema (the arrow package)
    requires transitive com.fasterxml.jackson.databind;
    requires transitive org.apache.arrow.vector;
    requires com.fasterxml.jackson.core;
    requires org.apache.arrow.memory.core;
    requires org.apache.arrow.format;
    requires org.apache.arrow.compression;
    requires org.apache.commons.compress;
    requires static org.checkerframework.checker.qual;

    exports dev.gdsloader.formats;
    exports dev.gdsloader.formats.arrow;
    exports dev.gdsloader.formats.idx;
    exports dev.gdsloader.formats.json;
    exports dev.gdsloader.formats.manifest;
    exports dev.gdsloader.formats.npy;
    exports dev.gdsloader.formats.raw;
    exports dev.gdsloader.formats.registry;
    exports dev.gdsloader.formats.safetensors;
}
