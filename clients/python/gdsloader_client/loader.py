"""``FlightLoader``: a gds-loader prefetch service stream as an iterable a PyTorch training loop uses like a
DataLoader, over Arrow Flight (``pyarrow.flight``): HOST delivery by ``DoGet``, CUDA_IPC delivery by ``DoExchange``.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import protocol as P
from .protocol import BatchMeta, Position, ProtocolError

Location = Union[str, Tuple[str, int]]


class ReconnectError(ConnectionError):
    """The server could not be reached again within ``reconnect_deadline`` seconds; ``__cause__`` is the last
    failure."""


class _StreamBroken(ConnectionError):
    """A stream ended or stalled in a way the client treats as a lost connection (resume and continue)."""


class Batch:
    """One batch of an epoch.

    * ``columns``: name -> tensor / array shaped ``[rows, *record shape]`` in dataset order (HOST: CPU torch
      tensors or numpy arrays sharing the received Arrow buffers, read-only; CUDA_IPC: torch CUDA tensors or CuPy
      arrays over the server's GPU slot, valid until the batch is released: clone what you keep);
    * ``records``: int64 ``[rows]``, the global record index of each row; ``is_padding``: bool ``[rows]``;
      ``padding``: the number of trailing padding rows (``Partition.PAD``; 0 with EXACT_ONCE);
    * ``epoch``, ``index`` (the batch's number in its epoch, from 0), ``state`` (the server's LoaderState JSON after
      this batch), ``delivery``.

    ``batch["x"]`` is ``batch.columns["x"]``. A CUDA_IPC batch is released (its slot given back to the server)
    when the next batch is requested, when the epoch's loop ends, or by :meth:`release`; the server reuses the slot
    only after the work queued so far on the consumer's current stream (an interprocess event, no host wait). Not
    thread-safe.
    """

    __slots__ = ("columns", "records", "is_padding", "padding", "epoch", "index", "state", "delivery", "rows",
                 "id", "_release", "_released")

    def __init__(self, columns: Dict[str, Any], records: Any, is_padding: Any, meta: BatchMeta, delivery: str,
                 rows: int, release: Optional[Callable[["Batch"], None]] = None):
        self.columns = columns
        self.records = records
        self.is_padding = is_padding
        self.padding = meta.padding
        self.epoch = meta.epoch
        self.index = meta.index
        self.state = meta.state
        self.id = meta.id
        self.delivery = delivery
        self.rows = rows
        self._release = release
        self._released = False

    def __getitem__(self, name: str) -> Any:
        return self.columns[name]

    def __contains__(self, name: str) -> bool:
        return name in self.columns

    def __len__(self) -> int:
        return self.rows

    def keys(self):
        return self.columns.keys()

    def items(self):
        return self.columns.items()

    @property
    def released(self) -> bool:
        return self._released

    def release(self) -> None:
        """Give the batch's memory back now (CUDA_IPC: ``{"release": id, "event": HANDLE}``, the slot reused after
        the consumer's queued work on its current stream; HOST: nothing to send). Idempotent."""
        if not self._released:
            self._released = True
            if self._release is not None:
                self._release(self)

    def __repr__(self) -> str:
        shapes = {k: tuple(getattr(v, "shape", ())) for k, v in self.columns.items()}
        return (f"Batch(epoch={self.epoch}, index={self.index}, rows={self.rows}, padding={self.padding}, "
                f"delivery={self.delivery}, columns={shapes})")


class _Watchdog:
    """Cancels a stream read that has waited longer than its deadline (``pyarrow.flight`` reads have no timeout of
    their own; a whole-call gRPC deadline would end a long epoch). One daemon thread, polling at most every second."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self._lock = threading.Condition()
        self._target = None
        self._deadline = 0.0
        self.fired = False
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="gdsloader-client-watchdog", daemon=True)
        self._thread.start()

    def arm(self, reader: Any) -> None:
        with self._lock:
            self._target = reader
            self._deadline = time.monotonic() + self.timeout
            self.fired = False

    def disarm(self) -> None:
        with self._lock:
            self._target = None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._target = None
            self._lock.notify_all()

    def _run(self) -> None:
        poll = max(0.05, min(1.0, self.timeout / 4))
        with self._lock:
            while not self._closed:
                self._lock.wait(poll)
                if self._target is not None and time.monotonic() >= self._deadline:
                    target, self._target = self._target, None
                    self.fired = True
                    try:
                        target.cancel()
                    except Exception:
                        pass


class _Stream:
    """One Flight stream of one epoch from one endpoint (HOST: DoGet; CUDA_IPC: DoExchange)."""

    def __init__(self, loader: "FlightLoader", client: Any, ticket_or_command: bytes, position: Position):
        self.loader = loader
        self.position = position
        self.delivery = loader.delivery
        self.reader = None
        self.writer = None
        self.ipc = None
        self.specs = None
        self.closed = False
        fl = loader._flight
        opts = loader._call_options(None)
        if self.delivery == "HOST":
            self.reader = client.do_get(fl.Ticket(ticket_or_command), opts)
        else:
            from .cuda_ipc import IpcStreamContext
            self.ipc = IpcStreamContext(loader.device, "torch" if loader.output == "torch" else "cupy")
            self.writer, self.reader = client.do_exchange(fl.FlightDescriptor.for_command(ticket_or_command), opts)

    def _read(self) -> Any:
        wd = self.loader._watchdog
        if wd is not None:
            wd.arm(self.reader)
        try:
            chunk = self.reader.read_chunk()
        except StopIteration:
            if wd is not None and wd.fired:
                raise _StreamBroken(f"no batch within {wd.timeout} s (wait_timeout); stream cancelled") from None
            return None
        except Exception as e:
            if wd is not None and wd.fired:
                raise _StreamBroken(f"no batch within {wd.timeout} s (wait_timeout); stream cancelled") from e
            raise
        finally:
            if wd is not None:
                wd.disarm()
        return chunk

    def next(self) -> Optional[Batch]:
        """The next batch, or None at the end of the stream."""
        from .host import batch_to_numpy, numpy_to_torch, schema_specs

        while True:
            chunk = self._read()
            if chunk is None:
                return None
            if chunk.data is None:
                if self.delivery == "CUDA_IPC" and P.is_end_message(chunk.app_metadata):
                    return None  # the exchange's end message (protocol 4): finish() half-closes after unmapping
                continue  # another metadata-only message: nothing the contract defines for server -> client; skip
            break
        rb = chunk.data
        meta = P.parse_batch_metadata(chunk.app_metadata, self.delivery)
        if not 0 <= meta.padding <= rb.num_rows:
            raise ProtocolError(f"epoch {meta.epoch} batch {meta.index}: padding {meta.padding} for "
                                f"{rb.num_rows} rows")
        if self.delivery == "HOST":
            if self.specs is None:
                self.specs = schema_specs(rb.schema)
            data = batch_to_numpy(rb, self.specs)
            columns, records, is_padding = data.columns, data.records, data.is_padding
        else:
            columns = {}
            records = _bookkeeping(rb, P.RECORD_COLUMN, "INT64")
            is_padding = _bookkeeping(rb, P.PADDING_COLUMN, "BOOL")
            for c in meta.columns:
                if not c.shape or c.shape[0] != rb.num_rows:
                    raise ProtocolError(f"CUDA_IPC batch {meta.index} column '{c.name}': shape {list(c.shape)} "
                                        f"does not start with the batch's {rb.num_rows} rows")
        pad_rows = int(is_padding.sum())
        if pad_rows != meta.padding or (pad_rows and not is_padding[rb.num_rows - pad_rows:].all()):
            raise ProtocolError(f"epoch {meta.epoch} batch {meta.index}: app_metadata says {meta.padding} trailing "
                                f"padding rows, '{P.PADDING_COLUMN}' marks {pad_rows}")
        # Continuity is checked before any GPU work (a refused batch opens nothing); the batch is recorded as
        # received only once its columns exist, so a failure in between resumes before it, not after.
        self.position.check(meta)
        if self.delivery == "CUDA_IPC":
            columns = self.ipc.columns(meta)
        if self.loader.output == "torch":
            if self.delivery == "HOST":
                columns = {s.name: numpy_to_torch(columns[s.name], s.dtype) for s in self.specs}
            records = numpy_to_torch(records)
            is_padding = numpy_to_torch(is_padding)
        release = self._release if self.delivery == "CUDA_IPC" else None
        self.position.accept(meta)
        return Batch(columns, records, is_padding, meta, self.delivery, rb.num_rows, release)

    def _release(self, batch: Batch) -> None:
        """Send ``{"release": id, "event": HANDLE}``: the server reuses the slot after the consumer's queued work
        (an interprocess event recorded on its stream, no host wait; where refused, ``{"release": id}`` after a host
        wait); nothing if this stream is gone."""
        if self.closed or batch.id is None:
            return
        event = self.ipc.release_after_consumer()
        try:
            self.writer.write_metadata(P.release_message(batch.id, event))
        except Exception as e:
            if not P.is_transient(e):
                raise
            # the connection is gone: the next read sees it and the loader resumes elsewhere

    def finish(self) -> None:
        """Normal end of the stream: unmap the server's buffers, tell the server we are done writing (it then frees
        them), wait for its final status, free everything."""
        if self.ipc is not None:
            self.ipc.close()
        if self.writer is not None and not self.closed:
            # Half-close, then wait for the server's final status (it frees the session's slots only after our side
            # is complete, since we map them until then); bounded by the read deadline.
            wd = self.loader._watchdog
            if wd is not None:
                wd.arm(self.reader)
            try:
                self.writer.done_writing()
                # read to the server's completion (it frees the session then); cancelling earlier would abort it
                while True:
                    self.reader.read_chunk()
            except StopIteration:
                pass
            except Exception:
                pass
            finally:
                if wd is not None:
                    wd.disarm()
            try:
                self.writer.close()
            except Exception:
                pass
            self.writer = None
        self.close()

    def close(self) -> None:
        """Abandon the stream (cancel reads, close the write side, drop the CUDA mappings' cache). Idempotent."""
        if self.closed:
            return
        self.closed = True
        if self.ipc is not None:
            self.ipc.close()  # unmapped before the server can see the stream end and free its slots
        if self.reader is not None:
            try:
                self.reader.cancel()
            except Exception:
                pass
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:
                pass
        if self.ipc is not None:
            self.ipc.close_release_event()  # the server completed or the stream is gone: no wait on it is left


def _bookkeeping(rb: Any, name: str, dtype: str) -> Any:
    from .host import column_to_numpy

    idx = rb.schema.get_field_index(name)
    if idx < 0:
        raise ProtocolError(f"record batch has no '{name}' column (schema: {rb.schema.names})")
    return column_to_numpy(rb.column(idx), P.dtype_of(dtype), name)


class FlightLoader:
    """Batches of one dataset from a gds-loader Flight server, one epoch per ``for batch in loader:``.

    ::

        loader = FlightLoader("grpc://127.0.0.1:8815", "train", batch_size=256, shuffle=True, seed=7)
        for epoch in range(epochs):
            loader.set_epoch(epoch)
            for batch in loader:
                x, y = batch["images"], batch["labels"]   # torch tensors [256, 28, 28], [256]
                ...

    Ranks: ``rank`` / ``world_size`` default to ``RANK`` / ``WORLD_SIZE`` (else 0 / 1) and ``device`` to
    ``LOCAL_RANK`` (else 0); the server splits each epoch across ranks (``partition``: EXACT_ONCE or PAD).

    Epochs: each ``__iter__`` streams the loader's current epoch (``epoch`` at construction, then one more after
    each completed epoch; :meth:`set_epoch` sets it). A loop left early (``break``) leaves the position where it
    was: the next ``__iter__`` continues that epoch after the last batch it yielded (``set_epoch(e,
    restart=True)`` starts it over).

    Exactly once: every batch's metadata carries the server's LoaderState after it; the loader keeps the last one.
    If the stream breaks (server killed and restarted, connection lost, no batch within ``wait_timeout``
    seconds), it reconnects with exponential backoff (``backoff_initial`` doubling up to ``backoff_max``) until
    ``reconnect_deadline`` seconds have passed without progress, and asks for the same epoch from that state, so
    the consumer sees every record of the epoch exactly once; it checks that the batch indices continue without
    gap or repeat (else :class:`ProtocolError`). :meth:`state_dict` / :meth:`load_state_dict` carry the same
    position across a process restart (checkpoints).

    Refusals (unknown dataset, bad option, authentication, limits) are not retried: they raise pyarrow's Flight
    error with the server's one-line message.

    :param location: ``"grpc://host:port"`` / ``"grpc+tls://host:port"`` or ``(host, port)``
    :param dataset: the dataset's directory name under the server's root
    :param batch_size: records per batch
    :param columns: the columns to load (default: all, in dataset order)
    :param shuffle: False / True (GLOBAL) / "NONE" / "GLOBAL" / "SHARD_BLOCKS"; ``seed`` its seed
    :param delivery: "HOST" (DoGet, any host) or "CUDA_IPC" (DoExchange, same host: columns stay in the server's
        GPU memory, needs CuPy)
    :param device: CUDA device ordinal for CUDA_IPC (default LOCAL_RANK); sent as the loader's ``device``
    :param options: further LoaderOptions fields, e.g. ``{"prefetchDepth": 8}``
    :param output: "torch" (tensors) or "numpy" (HOST: numpy arrays; CUDA_IPC: CuPy arrays)
    :param token: bearer token (header ``authorization: Bearer <token>``); ``token_file`` reads it from a file;
        default: the ``GDSLOADER_TOKEN`` environment variable, if set
    :param tls_root_certs: PEM bytes or a path to a PEM file of the CA that signed the server's certificate
        (use a ``grpc+tls://`` location); ``override_hostname`` overrides the name checked
    :param wait_timeout: seconds a read may wait for the next batch before the stream counts as broken (None: no
        limit); ``rpc_timeout``: deadline of GetFlightInfo calls
    :param reconnect_deadline: seconds of reconnect attempts without progress before :class:`ReconnectError`

    Not thread-safe: iterate from one thread. :meth:`close` (or ``with``) frees the connections.
    """

    def __init__(self, location: Location, dataset: str, batch_size: int, *, columns: Optional[Sequence[str]] = None,
                 shuffle: Any = False, seed: int = 0, rank: Optional[int] = None, world_size: Optional[int] = None,
                 partition: str = "EXACT_ONCE", drop_last: bool = False, block_records: Optional[int] = None,
                 delivery: str = "HOST", device: Optional[int] = None, options: Optional[Mapping[str, Any]] = None,
                 output: str = "torch", token: Optional[str] = None, token_file: Optional[str] = None,
                 tls_root_certs: Union[None, bytes, str] = None, override_hostname: Optional[str] = None,
                 wait_timeout: Optional[float] = 120.0, rpc_timeout: float = 30.0, reconnect_deadline: float = 120.0,
                 backoff_initial: float = 0.1, backoff_max: float = 2.0, epoch: int = 0,
                 environ: Optional[Mapping[str, str]] = None):
        env = os.environ if environ is None else environ
        env_rank, env_world, env_local = P.ranks_from_env(env)
        self.rank = env_rank if rank is None else rank
        self.world_size = env_world if world_size is None else world_size
        self.device = env_local if device is None else device
        self.dataset = dataset
        self.delivery = P.normalise_delivery(delivery)
        if output not in ("torch", "numpy", "cupy"):
            raise ValueError(f"output must be 'torch' or 'numpy' ('cupy' for CUDA_IPC), got {output!r}")
        self.output = "numpy" if output == "cupy" else output
        self.options = P.loader_options(
            batch_size, shuffle=shuffle, seed=seed, rank=self.rank, world_size=self.world_size, partition=partition,
            drop_last=drop_last, block_records=block_records, columns=columns,
            device=self.device if self.delivery == "CUDA_IPC" and "device" not in (options or {}) else None,
            extra=options)
        if not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch!r}")
        for name, v in (("rpc_timeout", rpc_timeout), ("reconnect_deadline", reconnect_deadline)):
            if not v > 0:
                raise ValueError(f"{name} must be > 0 seconds, got {v!r}")
        if wait_timeout is not None and not wait_timeout > 0:
            raise ValueError(f"wait_timeout must be > 0 seconds or None, got {wait_timeout!r}")
        P.backoff_delays(backoff_initial, backoff_max)  # validates
        self.backoff = (float(backoff_initial), float(backoff_max))
        self.wait_timeout = wait_timeout
        self.rpc_timeout = float(rpc_timeout)
        self.reconnect_deadline = float(reconnect_deadline)

        if token is not None and token_file is not None:
            raise ValueError("give token or token_file, not both")
        if token_file is not None:
            with open(token_file, "r", encoding="utf-8") as f:
                token = f.read().strip()
        if token is None:
            token = env.get("GDSLOADER_TOKEN") or None
        if token is not None and (not token or any(c in token for c in "\r\n")):
            raise ValueError("token must be a non-empty single line")
        self._headers = [(b"authorization", b"Bearer " + token.encode("utf-8"))] if token else None
        if isinstance(tls_root_certs, str):
            with open(tls_root_certs, "rb") as f:
                tls_root_certs = f.read()
        self._tls_root_certs = tls_root_certs
        self._override_hostname = override_hostname

        import pyarrow.flight as flight  # after argument checks: a bad argument is named even without pyarrow
        self._flight = flight
        if isinstance(location, tuple):
            host, port = location
            scheme = "grpc+tls" if tls_root_certs else "grpc+tcp"
            location = f"{scheme}://{host}:{int(port)}"
        if not isinstance(location, str):
            raise TypeError(f"location must be 'grpc://host:port' or (host, port), got {location!r}")
        self.location = location
        self._clients: Dict[str, Any] = {}
        self._watchdog = _Watchdog(wait_timeout) if wait_timeout is not None else None

        self._epoch = epoch
        self._pos: Optional[Position] = None
        # the last GetFlightInfo: (epoch, endpoints [(uri, ticket)], batchesPerEpoch, valid for every epoch)
        self._info_cache: Optional[Tuple[int, List[Tuple[str, bytes]], Optional[int], bool]] = None
        self._active = None
        self.reconnects = 0
        """How many times a broken stream was reopened (and resumed) since construction."""
        self.last_info: Dict[str, Any] = {}
        """GetFlightInfo's app_metadata of the last epoch planned (pathTaken, pathReason, batchesPerEpoch)."""

    # -- public API ---------------------------------------------------------------------------------------------

    @property
    def epoch(self) -> int:
        """The epoch the next ``__iter__`` streams (or is streaming)."""
        return self._epoch

    def set_epoch(self, epoch: int, restart: bool = False) -> None:
        """Stream ``epoch`` next. A saved or left-off position in the same epoch is kept (resume) unless
        ``restart``; a position in another epoch is dropped."""
        if not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch!r}")
        self._epoch = epoch
        if restart or (self._pos is not None and self._pos.epoch != epoch):
            self._pos = None

    def state_dict(self) -> Dict[str, Any]:
        """The position to resume from: the epoch and, mid-epoch, the last batch's LoaderState (JSON-serialisable).
        Taken after processing a batch, it resumes right after that batch."""
        pos = self._pos
        if pos is not None and pos.endpoint_complete and (self._info_cache is None or len(self._info_cache[1]) == 1):
            return P.make_state_dict(self._fingerprint(), pos.epoch + 1, None)  # its last batch: the epoch is done
        return P.make_state_dict(self._fingerprint(), self._epoch, pos)

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resume from :meth:`state_dict` (of a loader with the same dataset, batch size, sampler and ranks).

        :raises ValueError: naming the field that differs or is malformed
        """
        pos = P.position_from_state_dict(state, self._fingerprint())
        self._close_active()
        self._epoch = pos.epoch
        self._pos = pos if (pos.batches > 0 or pos.endpoint > 0) else None

    def __len__(self) -> int:
        """Batches per epoch on this rank, as the server's GetFlightInfo says (``batchesPerEpoch``)."""
        failing_since, delays = None, None
        while True:
            try:
                _, expected = self._plan(self._epoch)
                break
            except Exception as e:
                failing_since, delays = self._backoff_or_raise(e, failing_since, delays, "GetFlightInfo")
        if expected is None:
            raise TypeError("the server's FlightInfo has no batchesPerEpoch")
        return expected

    def __iter__(self) -> Iterator[Batch]:
        self._close_active()
        if self._pos is None or self._pos.epoch != self._epoch:
            self._pos = Position(self._epoch)
        gen = self._run_epoch(self._pos)
        self._active = gen
        return gen

    def close(self) -> None:
        """Stop any iteration and close the connections. Idempotent."""
        self._close_active()
        for c in self._clients.values():
            try:
                c.close()
            except Exception:
                pass
        self._clients.clear()
        if self._watchdog is not None:
            self._watchdog.close()
            self._watchdog = None

    def __del__(self) -> None:
        wd = getattr(self, "_watchdog", None)
        if wd is not None:  # its thread would otherwise outlive an unclosed loader
            wd.close()

    def __enter__(self) -> "FlightLoader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------------------------------

    def _fingerprint(self) -> Dict[str, Any]:
        return {"dataset": self.dataset, "batchSize": self.options["batchSize"], "sampler": self.options["sampler"],
                "columns": self.options.get("columns")}

    def _close_active(self) -> None:
        gen, self._active = self._active, None
        if gen is not None:
            gen.close()

    def _call_options(self, timeout: Optional[float]) -> Any:
        return self._flight.FlightCallOptions(timeout=timeout, headers=self._headers)

    def _client(self, uri: str) -> Any:
        c = self._clients.get(uri)
        if c is None:
            kwargs: Dict[str, Any] = {}
            if self._tls_root_certs:
                kwargs["tls_root_certs"] = self._tls_root_certs
            if self._override_hostname:
                kwargs["override_hostname"] = self._override_hostname
            c = self._flight.FlightClient(uri, **kwargs)
            self._clients[uri] = c
        return c

    def _drop_clients(self) -> None:
        """Forget every connection (after a failure: a fresh channel does not inherit gRPC's reconnect backoff)."""
        for c in self._clients.values():
            try:
                c.close()
            except Exception:
                pass
        self._clients.clear()

    def _request(self, epoch: int, state: Optional[Mapping[str, Any]]) -> bytes:
        return P.encode_request(P.build_request(self.dataset, self.options, delivery=self.delivery, epoch=epoch,
                                                state=state))

    def _plan(self, epoch: int) -> Tuple[List[Tuple[str, bytes]], Optional[int]]:
        """The epoch's endpoints [(location uri, ticket)] and its batch count on this rank, from GetFlightInfo."""
        c = self._info_cache
        if c is not None and (c[0] == epoch or c[3]):
            return c[1], c[2]
        command = self._request(epoch, None)
        try:
            info = self._client(self.location).get_flight_info(
                self._flight.FlightDescriptor.for_command(command), self._call_options(self.rpc_timeout))
        except NotImplementedError:
            self._info_cache = (epoch, [(self.location, command)], None, True)
            return self._info_cache[1], None
        meta = P.parse_info_metadata(getattr(info, "app_metadata", None))
        self.last_info = meta
        expected = meta.get("batchesPerEpoch")
        if expected is not None and (not isinstance(expected, int) or expected < 0):
            raise ProtocolError(f"FlightInfo app_metadata 'batchesPerEpoch' must be an integer >= 0, got {expected!r}")
        endpoints: List[Tuple[str, bytes]] = []
        for ep in info.endpoints:
            uri = self.location
            for loc in ep.locations:
                u = loc.uri.decode() if isinstance(loc.uri, bytes) else str(loc.uri)
                if not u.startswith("arrow-flight-reuse-connection:"):
                    uri = u
                break
            endpoints.append((uri, bytes(ep.ticket.ticket)))
        if not endpoints:
            endpoints = [(self.location, command)]
        if self.delivery == "CUDA_IPC":
            # CUDA IPC only works on this host, from the server we asked, with the request itself as command.
            endpoints = [(self.location, command)]
        # One endpoint on the server asked: the same for every epoch (its ticket gets each epoch written into it, the
        # batch count does not depend on the epoch), so later epochs skip the call (it builds a loader server-side).
        reusable = len(endpoints) == 1 and endpoints[0][0] == self.location
        self._info_cache = (epoch, endpoints, expected, reusable)
        return endpoints, expected

    def _open(self, endpoint: Tuple[str, bytes], pos: Position) -> _Stream:
        uri, ticket = endpoint
        try:  # the server's ticket (JSON, maybe with fields it added), for this epoch, from this state
            payload = P.ticket_with_state(ticket, pos.state, pos.epoch)
        except ProtocolError:
            payload = self._request(pos.epoch, pos.state)
        return _Stream(self, self._client(uri), payload, pos)

    def _backoff_or_raise(self, e: Exception, failing_since: Optional[float], delays: Any,
                          where: str) -> Tuple[float, Any]:
        """After a failure: re-raise a refusal; else wait the next backoff delay, forget the connections and count a
        reconnect; or raise :class:`ReconnectError` once ``reconnect_deadline`` has passed since the first failure
        without progress. Returns the (failing_since, delays) to pass next time."""
        if not P.is_transient(e):
            raise e
        now = time.monotonic()
        if failing_since is None:
            failing_since = now
            delays = P.backoff_delays(*self.backoff)
        if now - failing_since > self.reconnect_deadline:
            raise ReconnectError(
                f"gdsloader server at {self.location} unreachable for {now - failing_since:.1f} s "
                f"(reconnect_deadline {self.reconnect_deadline} s), {where}: {e}") from e
        self._drop_clients()
        self._info_cache = None
        time.sleep(min(next(delays), max(0.0, failing_since + self.reconnect_deadline - now)))
        self.reconnects += 1
        return failing_since, delays

    def _run_epoch(self, pos: Position) -> Iterator[Batch]:
        epoch = pos.epoch
        failing_since: Optional[float] = None
        delays = None
        stream: Optional[_Stream] = None
        last: Optional[Batch] = None
        try:
            while True:
                try:
                    endpoints, expected = self._plan(epoch)
                    if pos.endpoint >= len(endpoints):
                        break
                    if pos.endpoint_complete:  # resumed from the state of an endpoint's last batch: nothing left
                        if pos.endpoint + 1 >= len(endpoints):
                            break
                        pos.next_endpoint()
                        continue
                    stream = self._open(endpoints[pos.endpoint], pos)
                    while True:
                        batch = stream.next()
                        if batch is None:
                            break
                        failing_since, delays = None, None
                        last = batch
                        yield batch
                        last = None
                        batch.release()
                    if len(endpoints) == 1 and expected is not None:
                        if pos.batches < expected:
                            raise _StreamBroken(f"epoch {epoch} stream ended after {pos.batches} of {expected} "
                                                f"batches")
                        if pos.batches > expected:
                            raise ProtocolError(f"epoch {epoch}: {pos.batches} batches, but GetFlightInfo said "
                                                f"{expected}")
                    stream.finish()
                    stream = None
                    if pos.endpoint + 1 >= len(endpoints):
                        break
                    pos.next_endpoint()
                except Exception as e:
                    if last is not None:
                        last._released = True  # its stream is gone; nothing to give back
                        last = None
                    if stream is not None:
                        stream.close()
                        stream = None
                    c = self._info_cache
                    if (P.is_transient(e) and c is not None and c[2] is not None and len(c[1]) == 1
                            and pos.batches >= c[2]):
                        break  # every batch arrived; only the end of the stream was lost
                    failing_since, delays = self._backoff_or_raise(
                        e, failing_since, delays, f"epoch {epoch} after {pos.batches} batches")
            # the epoch is complete
            if self._pos is pos:
                self._pos = None
                self._epoch = epoch + 1
        finally:
            if last is not None:
                try:
                    last.release()
                except Exception:
                    pass
            if stream is not None:
                stream.close()
