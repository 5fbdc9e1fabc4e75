/**
 * Arrow IPC record batches in device memory: {@link dev.gdsloader.loader.arrow.ArrowBatchReader} reads one record
 * batch's body per read (GDS, bounce or host) and exposes each column's validity, offsets and values as
 * {@link dev.gdsloader.loader.arrow.ArrowDeviceColumn} views, next to the fixed-size record loader.
 */
package dev.gdsloader.loader.arrow;
