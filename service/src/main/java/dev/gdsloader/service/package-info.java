/**
 * The standalone prefetch service: {@link dev.gdsloader.service.PrefetchServer} runs a
 * {@link dev.gdsloader.loader.GdsLoader} per client session and delivers its batches over TCP (host delivery:
 * the column bytes in the frame) or, on the same host and GPU, as CUDA IPC memory handles of the loader's slot
 * buffers (GPU delivery); {@link dev.gdsloader.service.PrefetchClient} is the blocking client a training loop
 * iterates.
 *
 * <p>The pipeline is a chain of small Netty handlers, each with one job: a
 * {@code LengthFieldBasedFrameDecoder} cuts the byte stream into frames, {@link dev.gdsloader.service.FrameCodec}
 * turns a frame into a JSON header and a payload {@code ByteBuf}, and a session handler acts on it. Every
 * {@code ByteBuf} has one owner at a time and is released once (Netty's reference-counting rules:
 * https://netty.io/wiki/reference-counted-objects.html).
 */
package dev.gdsloader.service;
