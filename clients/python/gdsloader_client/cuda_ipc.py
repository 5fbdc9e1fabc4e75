"""CUDA_IPC delivery: open the server's slot buffers with CuPy and hand columns out as torch tensors (DLPack) or
CuPy arrays, ordered after the server's ready event, without copying.

Ownership: each opened ``cudaIpcMemHandle_t`` is one :class:`_Mapping` per (device, handle) in this process, opened
on first sight and cached by the stream (the server reuses its slots), closed (``cudaIpcCloseMemHandle``) when the
stream ends or breaks: before the server frees its slots, as CUDA requires of an importer. A batch's tensors are
valid until its release (the next batch, the end of the loop, ``batch.release()``): after that the server may
refill the slot, and after the stream's end the memory is unmapped. Clone what you keep.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Dict, Optional

from .protocol import BatchMeta, numpy_dtype

_CACHE_LIMIT = 256
_lock = threading.Lock()
_mappings: "weakref.WeakValueDictionary[tuple, _Mapping]" = weakref.WeakValueDictionary()


def _cupy():
    try:
        import cupy
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("CUDA_IPC delivery needs CuPy (pip install cupy-cuda12x): " + str(e)) from e
    return cupy


class IpcOpenError(ConnectionError):
    """A server's IPC handle could not be opened (typically: the server process is gone). A ConnectionError, so
    the loader treats it as a broken stream: it reconnects and resumes before the batch that named the handle."""


class _Mapping:
    """One ``cudaIpcOpenMemHandle`` of a server allocation on ``device``; closed when garbage."""

    __slots__ = ("device", "ptr", "__weakref__")

    def __init__(self, device: int, handle: bytes):
        cupy = _cupy()
        self.device = device
        self.ptr = 0
        with cupy.cuda.Device(device):
            try:
                self.ptr = int(cupy.cuda.runtime.ipcOpenMemHandle(handle))
            except cupy.cuda.runtime.CUDARuntimeError as e:
                raise IpcOpenError(f"cudaIpcOpenMemHandle on device {device} failed: {e}") from e

    def close(self) -> None:
        """``cudaIpcCloseMemHandle`` now (idempotent). Arrays still over it must not be used after this."""
        if self.ptr:
            ptr, self.ptr = self.ptr, 0
            try:
                cupy = _cupy()
                with cupy.cuda.Device(self.device):
                    cupy.cuda.runtime.ipcCloseMemHandle(ptr)
            except Exception:  # the server may be gone, or the interpreter shutting down
                pass

    def __del__(self):
        self.close()


class _Event:
    """One ``cudaIpcOpenEventHandle`` of a server event; destroyed when garbage (pending waits still complete)."""

    __slots__ = ("device", "ptr")

    def __init__(self, device: int, handle: bytes):
        cupy = _cupy()
        self.device = device
        self.ptr = 0
        with cupy.cuda.Device(device):
            try:
                self.ptr = int(cupy.cuda.runtime.ipcOpenEventHandle(handle))
            except cupy.cuda.runtime.CUDARuntimeError as e:
                raise IpcOpenError(f"cudaIpcOpenEventHandle on device {device} failed: {e}") from e

    def __del__(self):
        if self.ptr:
            try:
                cupy = _cupy()
                with cupy.cuda.Device(self.device):
                    cupy.cuda.runtime.eventDestroy(self.ptr)
            except Exception:
                pass
            self.ptr = 0


def open_mapping(device: int, handle: bytes) -> _Mapping:
    """The process's mapping of ``handle`` on ``device``: opened once while anything uses it."""
    key = (device, bytes(handle))
    with _lock:
        m = _mappings.get(key)
        if m is None:
            m = _Mapping(device, key[1])
            _mappings[key] = m
        return m


class IpcStreamContext:
    """The CUDA side of one DoExchange stream on the consumer's ``device``.

    Not thread-safe: used by the thread iterating the loader. ``output`` is ``"torch"`` (tensors through DLPack,
    ordered on torch's current stream) or ``"cupy"`` (CuPy arrays, ordered on CuPy's current stream).
    """

    def __init__(self, device: int, output: str):
        self.cupy = _cupy()
        self.device = int(device)
        self.output = output
        self.torch = None
        if output == "torch":
            import torch
            self.torch = torch
        self._maps: "OrderedDict[bytes, _Mapping]" = OrderedDict()
        self._events: "OrderedDict[bytes, _Event]" = OrderedDict()
        self._sync_event = 0
        self._release_event = 0  # this stream's interprocess release event (0: not made yet, or refused)
        self._release_handle: Optional[bytes] = None
        self._release_recorded = False
        self._no_release_event = False

    def consumer_stream(self) -> int:
        """The stream the consumer's work is ordered on (torch's or CuPy's current stream on the device)."""
        if self.torch is not None:
            return int(self.torch.cuda.current_stream(self.device).cuda_stream)
        with self.cupy.cuda.Device(self.device):
            return int(self.cupy.cuda.get_current_stream().ptr)

    def _mapping(self, handle: bytes) -> _Mapping:
        m = self._maps.get(handle)
        if m is None:  # no eviction: a stream's handles are its session's slot buffers, a bounded set
            m = open_mapping(self.device, handle)
            self._maps[handle] = m
        return m

    def _event(self, handle: bytes) -> _Event:
        e = self._events.get(handle)
        if e is None:
            e = _Event(self.device, handle)
            self._events[handle] = e
            if len(self._events) > _CACHE_LIMIT:
                self._events.popitem(last=False)
        else:
            self._events.move_to_end(handle)
        return e

    def columns(self, meta: BatchMeta) -> Dict[str, Any]:
        """The batch's columns over the server's memory, after making the consumer's stream wait for the batch's
        ready event (no host synchronisation). Shapes include the batch dimension, as the metadata gives them."""
        cupy = self.cupy
        out: Dict[str, Any] = {}
        with cupy.cuda.Device(self.device):
            if meta.event is not None:
                cupy.cuda.runtime.streamWaitEvent(self.consumer_stream(), self._event(meta.event).ptr, 0)
            for c in meta.columns:
                m = self._mapping(c.handle)
                mem = cupy.cuda.UnownedMemory(m.ptr + c.offset, c.nbytes, m, self.device)
                arr = cupy.ndarray(c.shape, dtype=numpy_dtype(c.dtype), memptr=cupy.cuda.MemoryPointer(mem, 0))
                if self.torch is not None:
                    try:
                        t = self.torch.from_dlpack(arr)
                    except (TypeError, RuntimeError, BufferError):
                        # an older torch/CuPy pair without a DLPack version in common: the CUDA array interface
                        # is zero-copy too
                        t = self.torch.as_tensor(arr, device=f"cuda:{self.device}")
                    if not c.dtype.native_in_numpy:
                        t = t.view(getattr(self.torch, c.dtype.torch))
                    out[c.name] = t
                else:
                    out[c.name] = arr
        return out

    def release_after_consumer(self) -> Optional[bytes]:
        """Order a slot's release after the work the consumer has queued so far on its stream, without blocking:
        this stream's interprocess event is recorded there (after the consumer's stream waited for its previous
        record, so the last record follows every release's work) and its 64-byte handle returned for the release
        message; the server makes the slot's reuse wait for it. Where the driver refuses interprocess events, blocks
        until that work is done instead (:meth:`wait_for_consumer`) and returns None."""
        cupy = self.cupy
        rt = cupy.cuda.runtime
        with cupy.cuda.Device(self.device):
            if not self._release_event and not self._no_release_event:
                try:
                    ev = int(rt.eventCreateWithFlags(rt.eventDisableTiming | rt.eventInterprocess))
                    try:
                        self._release_handle = bytes(rt.ipcGetEventHandle(ev))
                    except Exception:
                        rt.eventDestroy(ev)
                        raise
                    self._release_event = ev
                except Exception:  # the driver refuses interprocess events: synchronize instead
                    self._no_release_event = True
            if not self._release_event:
                self.wait_for_consumer()
                return None
            stream = self.consumer_stream()
            if self._release_recorded:
                rt.streamWaitEvent(stream, self._release_event, 0)
            rt.eventRecord(self._release_event, stream)
            self._release_recorded = True
            return self._release_handle

    def wait_for_consumer(self) -> None:
        """Block until the work the consumer has queued so far on its stream is done (before a slot goes back)."""
        cupy = self.cupy
        with cupy.cuda.Device(self.device):
            if not self._sync_event:
                self._sync_event = int(cupy.cuda.runtime.eventCreateWithFlags(cupy.cuda.runtime.eventDisableTiming))
            cupy.cuda.runtime.eventRecord(self._sync_event, self.consumer_stream())
            cupy.cuda.runtime.eventSynchronize(self._sync_event)

    def close(self) -> None:
        """Unmap this stream's server buffers and free its events. CUDA requires the importer to close a mapping
        before the exporter frees the memory, and the server frees a session's slots once the stream is over, so
        this runs before the stream's end is acknowledged: tensors of released batches must not be used after it.
        (Each stream is its own server session with its own slots, so no other stream shares these handles.)"""
        with _lock:
            for handle, m in self._maps.items():
                if _mappings.get((self.device, handle)) is m:
                    del _mappings[(self.device, handle)]
                m.close()
        self._maps.clear()
        self._events.clear()
        if self._sync_event:
            try:
                with self.cupy.cuda.Device(self.device):
                    self.cupy.cuda.runtime.eventDestroy(self._sync_event)
            except Exception:
                pass
            self._sync_event = 0

    def close_release_event(self) -> None:
        """Destroy the release event, once the server waits on it no more (after it completed the exchange)."""
        if self._release_event:
            try:
                with self.cupy.cuda.Device(self.device):
                    self.cupy.cuda.runtime.eventDestroy(self._release_event)
            except Exception:
                pass
            self._release_event = 0
