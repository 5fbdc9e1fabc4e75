"""The pure part of the gds-loader Flight client: the wire contract (protocol version 4) without any I/O.

Nothing here imports pyarrow, torch or cupy, so it can be checked on any machine with numpy. What it covers:

* building the request JSON (``FlightDescriptor.command`` and ``Ticket`` bytes) from loader options;
* parsing a batch's ``app_metadata`` JSON (HOST and CUDA_IPC forms), with errors naming the field;
* the DType table: gds-loader DType name -> numpy dtype, element size, torch dtype name;
* per-record shapes from the Arrow field metadata ``gdsloader.shape`` / ``gdsloader.dtype``;
* rank / world size / local rank from ``RANK`` / ``WORLD_SIZE`` / ``LOCAL_RANK``;
* which failures are transient (reconnect and resume) and the reconnect backoff;
* the client-side position (epoch, endpoint, last batch index, last ``state``) behind exact-once resume and
  ``state_dict()`` / ``load_state_dict()``.
"""

from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

PROTOCOL_VERSION = 4
"""The ``version`` every request carries and the schema metadata ``gdsloader.version`` a server sends."""

DELIVERIES = ("HOST", "CUDA_IPC")
SHUFFLES = ("NONE", "GLOBAL", "SHARD_BLOCKS")
PARTITIONS = ("EXACT_ONCE", "PAD")

RECORD_COLUMN = "_record"
PADDING_COLUMN = "_padding"
META_DTYPE = "gdsloader.dtype"
META_SHAPE = "gdsloader.shape"
META_VERSION = "gdsloader.version"

IPC_HANDLE_BYTES = 64
"""Size of a ``cudaIpcMemHandle_t`` / ``cudaIpcEventHandle_t``."""

STATE_DICT_VERSION = 1


class ProtocolError(RuntimeError):
    """The server sent something the contract does not allow (a bad metadata field, a batch out of order...).

    Not transient: the client does not reconnect on it.
    """


@dataclass(frozen=True)
class DType:
    """One gds-loader element type.

    ``numpy`` is the numpy dtype the bytes are viewed as (little-endian); for types numpy lacks (bfloat16,
    float8) it is an unsigned integer of the same size and ``torch`` names the real type.
    """

    name: str
    itemsize: int
    numpy: str
    torch: str
    native_in_numpy: bool = True


_DTYPES = [
    DType("BOOL", 1, "|b1", "bool"),
    DType("INT8", 1, "|i1", "int8"),
    DType("UINT8", 1, "|u1", "uint8"),
    DType("INT16", 2, "<i2", "int16"),
    DType("UINT16", 2, "<u2", "uint16"),
    DType("INT32", 4, "<i4", "int32"),
    DType("UINT32", 4, "<u4", "uint32"),
    DType("INT64", 8, "<i8", "int64"),
    DType("UINT64", 8, "<u8", "uint64"),
    DType("FLOAT16", 2, "<f2", "float16"),
    DType("FLOAT32", 4, "<f4", "float32"),
    DType("FLOAT64", 8, "<f8", "float64"),
    DType("BFLOAT16", 2, "<u2", "bfloat16", native_in_numpy=False),
    DType("FLOAT8_E4M3", 1, "|u1", "float8_e4m3fn", native_in_numpy=False),
    DType("FLOAT8_E5M2", 1, "|u1", "float8_e5m2", native_in_numpy=False),
]
DTYPES: Dict[str, DType] = {d.name: d for d in _DTYPES}
# The short (safetensors-style) names the contract also mentions, accepted on input.
_ALIASES = {"BOOL": "BOOL", "I8": "INT8", "U8": "UINT8", "I16": "INT16", "U16": "UINT16", "I32": "INT32",
            "U32": "UINT32", "I64": "INT64", "U64": "UINT64", "F16": "FLOAT16", "F32": "FLOAT32", "F64": "FLOAT64",
            "BF16": "BFLOAT16", "F8_E4M3": "FLOAT8_E4M3", "F8_E5M2": "FLOAT8_E5M2"}


def dtype_of(name: Any, where: str = "dtype") -> DType:
    """The DType called ``name`` (``"UINT8"``; the short names ``"U8"`` ... are accepted too).

    :raises ProtocolError: naming ``where`` and the value if it is not a known DType name
    """
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    if not isinstance(name, str):
        raise ProtocolError(f"{where}: expected a DType name, got {name!r}")
    key = name.strip().upper()
    key = _ALIASES.get(key, key)
    if key not in DTYPES:
        raise ProtocolError(f"{where}: unknown DType {name!r} (expected one of {', '.join(DTYPES)})")
    return DTYPES[key]


def numpy_dtype(dt: DType) -> np.dtype:
    """The numpy dtype a column's bytes are viewed as (an unsigned integer of the same size where numpy lacks it)."""
    return np.dtype(dt.numpy)


def parse_shape(value: Any, where: str = "shape") -> Tuple[int, ...]:
    """A per-record shape from ``gdsloader.shape`` (JSON text or bytes such as ``"[28,28]"``) or a list.

    :raises ProtocolError: if it is not a JSON array of non-negative integers
    """
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as e:
            raise ProtocolError(f"{where}: not a JSON array: {value!r} ({e})") from None
    if not isinstance(value, list) or not all(_is_int(v) and v >= 0 for v in value):
        raise ProtocolError(f"{where}: expected a JSON array of non-negative integers, got {value!r}")
    return tuple(int(v) for v in value)


def element_count(shape: Sequence[int]) -> int:
    """Elements per record for a per-record shape (1 for a scalar shape ``()``)."""
    return int(math.prod(shape)) if shape else 1


@dataclass(frozen=True)
class ColumnSpec:
    """A dataset column as the HOST schema describes it: name, DType and per-record shape (no batch dimension)."""

    name: str
    dtype: DType
    shape: Tuple[int, ...]

    @property
    def elements(self) -> int:
        return element_count(self.shape)

    @property
    def record_bytes(self) -> int:
        return self.elements * self.dtype.itemsize


def column_spec(name: str, metadata: Optional[Mapping[Any, Any]], list_size: Optional[int],
                arrow_type_name: str = "") -> ColumnSpec:
    """The spec of one dataset column from its Arrow field metadata.

    :param name: the field name
    :param metadata: the field's metadata (pyarrow gives ``{bytes: bytes}``), or None
    :param list_size: the FixedSizeList size if the field is one, else None (primitive: one element per record)
    :param arrow_type_name: for error messages only
    :raises ProtocolError: if the metadata is missing or malformed, or its shape disagrees with the list size
    """
    md = {(_text(k)): _text(v) for k, v in (metadata or {}).items()}
    if META_DTYPE not in md:
        raise ProtocolError(f"column '{name}' ({arrow_type_name}): field metadata '{META_DTYPE}' is missing")
    dt = dtype_of(md[META_DTYPE], f"column '{name}' metadata '{META_DTYPE}'")
    if META_SHAPE in md:
        shape = parse_shape(md[META_SHAPE], f"column '{name}' metadata '{META_SHAPE}'")
    else:
        shape = () if list_size is None else (int(list_size),)
    n = element_count(shape)
    expected = 1 if list_size is None else int(list_size)
    if n != expected:
        raise ProtocolError(f"column '{name}': metadata shape {list(shape)} has {n} elements per record but the "
                            f"Arrow type {arrow_type_name or '?'} holds {expected}")
    return ColumnSpec(name, dt, shape)


# ---------------------------------------------------------------------------------------------------------------
# Requests


def normalise_shuffle(shuffle: Any) -> str:
    """``True`` -> ``"GLOBAL"``, ``False``/``None`` -> ``"NONE"``, else one of NONE / GLOBAL / SHARD_BLOCKS (any case)."""
    if shuffle is True:
        return "GLOBAL"
    if shuffle is False or shuffle is None:
        return "NONE"
    if isinstance(shuffle, str) and shuffle.strip().upper() in SHUFFLES:
        return shuffle.strip().upper()
    raise ValueError(f"shuffle: expected a bool or one of {', '.join(SHUFFLES)}, got {shuffle!r}")


def normalise_delivery(delivery: Any) -> str:
    if isinstance(delivery, str) and delivery.strip().upper() in DELIVERIES:
        return delivery.strip().upper()
    raise ValueError(f"delivery: expected one of {', '.join(DELIVERIES)}, got {delivery!r}")


def loader_options(batch_size: int, *, shuffle: Any = False, seed: int = 0, rank: int = 0, world_size: int = 1,
                   partition: str = "EXACT_ONCE", drop_last: bool = False, block_records: Optional[int] = None,
                   columns: Optional[Sequence[str]] = None, device: Optional[int] = None,
                   extra: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The ``"options"`` object of a request (LoaderOptions JSON: only the fields given; the server fills defaults).

    ``extra`` adds or overrides LoaderOptions fields (e.g. ``{"prefetchDepth": 8, "path": "HOST"}``); a nested
    ``"sampler"`` in it is merged into the sampler built here. Unknown fields are refused by the server by name.

    :raises ValueError: naming the first invalid argument
    """
    if not _is_int(batch_size) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive number of records, got {batch_size!r}")
    if not _is_int(world_size) or world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size!r}")
    if not _is_int(rank) or not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, {world_size}) (world_size {world_size}), got {rank!r}")
    if not _is_int(seed):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not isinstance(partition, str) or partition.strip().upper() not in PARTITIONS:
        raise ValueError(f"partition: expected one of {', '.join(PARTITIONS)}, got {partition!r}")
    sampler: Dict[str, Any] = {"shuffle": normalise_shuffle(shuffle), "seed": int(seed), "rank": int(rank),
                               "worldSize": int(world_size), "partition": partition.strip().upper(),
                               "dropLast": bool(drop_last)}
    if block_records is not None:
        if not _is_int(block_records) or block_records < 0:
            raise ValueError(f"block_records must be >= 0 (0: the batch size), got {block_records!r}")
        sampler["blockRecords"] = int(block_records)
    opts: Dict[str, Any] = {"batchSize": int(batch_size), "sampler": sampler}
    if columns is not None:
        if isinstance(columns, str) or not all(isinstance(c, str) and c for c in columns):
            raise ValueError(f"columns must be a list of column names, got {columns!r}")
        opts["columns"] = list(columns)
    if device is not None:
        if not _is_int(device) or device < 0:
            raise ValueError(f"device must be a CUDA device ordinal >= 0, got {device!r}")
        opts["device"] = int(device)
    for k, v in (extra or {}).items():
        if k == "sampler" and isinstance(v, Mapping):
            sampler.update(v)
        else:
            opts[k] = v
    return opts


def build_request(dataset: str, options: Mapping[str, Any], *, delivery: str = "HOST", epoch: int = 0,
                  state: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The request object (protocol version 4). ``state`` resumes right after the batch it was saved at."""
    if not isinstance(dataset, str) or not dataset:
        raise ValueError(f"dataset must be a non-empty directory name under the server's root, got {dataset!r}")
    if not _is_int(epoch) or epoch < 0:
        raise ValueError(f"epoch must be >= 0, got {epoch!r}")
    req: Dict[str, Any] = {"version": PROTOCOL_VERSION, "dataset": dataset, "options": dict(options),
                           "delivery": normalise_delivery(delivery), "epoch": int(epoch)}
    if state is not None:
        req["state"] = dict(state)
    return req


def encode_request(request: Mapping[str, Any]) -> bytes:
    """UTF-8 JSON bytes of a request (compact, keys in insertion order)."""
    return json.dumps(request, separators=(",", ":")).encode("utf-8")


def ticket_with_state(ticket: bytes, state: Optional[Mapping[str, Any]], epoch: int) -> bytes:
    """A server's ticket (JSON, possibly with fields the server added) with ``state`` and ``epoch`` set for a resume.

    :raises ProtocolError: if the ticket is not a JSON object (the contract says tickets are request JSON)
    """
    try:
        obj = json.loads(bytes(ticket).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ProtocolError(f"ticket is not UTF-8 JSON, cannot add a resume state to it ({e})") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"ticket is not a JSON object: {obj!r:.200}")
    obj["epoch"] = int(epoch)
    if state is None:
        obj.pop("state", None)
    else:
        obj["state"] = dict(state)
    return encode_request(obj)


# ---------------------------------------------------------------------------------------------------------------
# Batch metadata


@dataclass(frozen=True)
class IpcColumn:
    """One column of a CUDA_IPC batch: ``bytes`` bytes at ``offset`` into the allocation behind ``handle``."""

    name: str
    dtype: DType
    shape: Tuple[int, ...]
    nbytes: int
    offset: int
    handle: bytes
    device: int


@dataclass(frozen=True)
class BatchMeta:
    """A batch's ``app_metadata``: epoch, index (batch number in the epoch's stream, from 0), trailing padding rows,
    the LoaderState JSON after this batch; and for CUDA_IPC the release id, the columns and the ready event."""

    epoch: int
    index: int
    padding: int
    state: Optional[Dict[str, Any]]
    id: Optional[int] = None
    columns: Tuple[IpcColumn, ...] = ()
    event: Optional[bytes] = None
    raw: Dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def parse_batch_metadata(buf: Any, delivery: str = "HOST") -> BatchMeta:
    """Parse a batch's ``app_metadata`` (bytes / memoryview / pyarrow Buffer of UTF-8 JSON).

    :raises ProtocolError: naming the missing or malformed field
    """
    if buf is None:
        raise ProtocolError("batch without app_metadata (expected {\"epoch\", \"index\", \"padding\", \"state\"})")
    try:
        raw = bytes(buf)
        obj = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, TypeError) as e:
        raise ProtocolError(f"batch app_metadata is not UTF-8 JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"batch app_metadata is not a JSON object: {obj!r:.200}")
    epoch = _req_int(obj, "epoch", 0)
    index = _req_int(obj, "index", 0)
    padding = _req_int(obj, "padding", 0)
    state = obj.get("state")
    if state is not None and not isinstance(state, dict):
        raise ProtocolError(f"batch app_metadata 'state': expected a JSON object, got {state!r:.200}")
    if normalise_delivery(delivery) == "HOST":
        return BatchMeta(epoch, index, padding, state, raw=obj)
    bid = _req_int(obj, "id", None)
    cols = obj.get("columns")
    if not isinstance(cols, list) or not cols:
        raise ProtocolError(f"CUDA_IPC batch {index}: 'columns' must be a non-empty JSON array, got {cols!r:.200}")
    parsed = []
    for i, c in enumerate(cols):
        where = f"CUDA_IPC batch {index} column #{i}"
        if not isinstance(c, dict):
            raise ProtocolError(f"{where}: expected a JSON object, got {c!r:.200}")
        name = c.get("name")
        if not isinstance(name, str) or not name:
            raise ProtocolError(f"{where}: 'name' must be a non-empty string, got {name!r}")
        where = f"CUDA_IPC batch {index} column '{name}'"
        dt = dtype_of(c.get("dtype"), f"{where} 'dtype'")
        shape = parse_shape(c.get("shape"), f"{where} 'shape'")
        nbytes = _req_int(c, "bytes", 0, where)
        offset = _req_int(c, "offset", 0, where)
        device = _req_int(c, "device", 0, where)
        handle = decode_handle(c.get("ipcHandle"), f"{where} 'ipcHandle'")
        need = element_count(shape) * dt.itemsize if shape else dt.itemsize
        if need > nbytes:
            raise ProtocolError(f"{where}: shape {list(shape)} of {dt.name} is {need} bytes but 'bytes' says only "
                                f"{nbytes}")
        parsed.append(IpcColumn(name, dt, shape, nbytes, offset, handle, device))
    ev = obj.get("event")
    event = None if ev is None else decode_handle(ev, f"CUDA_IPC batch {index} 'event'")
    return BatchMeta(epoch, index, padding, state, bid, tuple(parsed), event, raw=obj)


def decode_handle(value: Any, where: str) -> bytes:
    """The 64 bytes of a base64 CUDA IPC handle.

    :raises ProtocolError: if it is not base64 of exactly 64 bytes
    """
    if not isinstance(value, str):
        raise ProtocolError(f"{where}: expected base64 text, got {value!r:.100}")
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as e:
        raise ProtocolError(f"{where}: not base64 ({e})") from None
    if len(raw) != IPC_HANDLE_BYTES:
        raise ProtocolError(f"{where}: expected {IPC_HANDLE_BYTES} bytes, got {len(raw)}")
    return raw


def is_end_message(app_metadata: Any) -> bool:
    """True for CUDA_IPC's end message, metadata only: ``{"end": true, "batches": N}`` (protocol 4), which the server
    sends after an epoch's last batch; the client then releases what it holds, unmaps, and half-closes."""
    if app_metadata is None:
        return False
    try:
        m = json.loads(bytes(app_metadata))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(m, dict) and m.get("end") is True


def release_message(batch_id: int, event: Optional[bytes] = None) -> bytes:
    """The client-to-server metadata message that gives a CUDA_IPC batch's slot back: ``{"release": ID}``, or with
    ``event`` (the 64-byte handle of the client's interprocess event recorded after its work on the batch)
    ``{"release": ID, "event": BASE64}``: the server reuses the slot only after that event, on its own stream."""
    m: Dict[str, Any] = {"release": int(batch_id)}
    if event is not None:
        m["event"] = base64.b64encode(bytes(event)).decode("ascii")
    return encode_request(m)


def parse_info_metadata(buf: Any) -> Dict[str, Any]:
    """GetFlightInfo's ``app_metadata`` (``{"pathTaken", "pathReason", "batchesPerEpoch"}``); ``{}`` if absent/empty."""
    if buf is None:
        return {}
    raw = bytes(buf)
    if not raw:
        return {}
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ProtocolError(f"FlightInfo app_metadata is not UTF-8 JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"FlightInfo app_metadata is not a JSON object: {obj!r:.200}")
    return obj


# ---------------------------------------------------------------------------------------------------------------
# Environment


def ranks_from_env(environ: Mapping[str, str]) -> Tuple[int, int, int]:
    """(rank, world size, local rank) from ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` (defaults 0, 1, 0).

    :raises ValueError: naming the variable if one is not an integer or the ranks are inconsistent
    """
    def get(name: str, default: int) -> int:
        v = environ.get(name)
        if v is None or v.strip() == "":
            return default
        try:
            return int(v.strip())
        except ValueError:
            raise ValueError(f"environment variable {name}={v!r} is not an integer") from None
    rank, world, local = get("RANK", 0), get("WORLD_SIZE", 1), get("LOCAL_RANK", 0)
    if world < 1:
        raise ValueError(f"WORLD_SIZE={world} must be >= 1")
    if not 0 <= rank < world:
        raise ValueError(f"RANK={rank} must be in [0, WORLD_SIZE={world})")
    if local < 0:
        raise ValueError(f"LOCAL_RANK={local} must be >= 0")
    return rank, world, local


# ---------------------------------------------------------------------------------------------------------------
# Failures and reconnects

_TRANSIENT_CLASSES = {"FlightUnavailableError", "FlightInternalError", "FlightTimedOutError"}
_TRANSPORT_TEXT = re.compile(
    r"stream removed|socket closed|connection reset|connection refused|failed to connect|broken pipe|rst_stream|"
    r"goaway|transport closed|connect failed|end of file|unexpected eof|server shutting down|"
    r"stream finished before|network is unreachable|keepalive",
    re.IGNORECASE)


# A connection the server refused at its connection limits (RESOURCE_EXHAUSTED, service/README.md "Limits"): the Java
# client reads the trailer gdsloader-limit; pyarrow raises ArrowInvalid without trailers, so the message it keeps from
# Arrow's gRPC transport ("gRPC returned resource exhausted error, with message: ...") and the server's fixed prefix
# ("connection limit reached") are what tells it apart from a session, call or memory refusal.
_CONNECTION_REFUSED = re.compile(r"resource exhausted error, with message: connection limit reached", re.IGNORECASE)


def is_transient(exc: BaseException) -> bool:
    """Whether a failure is worth a reconnect and resume: the server or the connection went away (UNAVAILABLE,
    INTERNAL, a deadline, or a transport error text such as "Socket closed"), or the server refused the connection
    at its connection limits (RESOURCE_EXHAUSTED "connection limit reached"); not a refusal (bad request, unknown
    dataset, authentication, a session, call or memory budget limit)."""
    names = {c.__name__ for c in type(exc).__mro__}
    if names & _TRANSIENT_CLASSES:
        return True
    if _CONNECTION_REFUSED.search(str(exc)):
        return True
    if names & {"FlightUnauthenticatedError", "FlightUnauthorizedError", "ArrowInvalid", "ArrowKeyError",
                "ArrowNotImplementedError", "ProtocolError", "FlightWriteSizeExceededError"}:
        return False
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    return bool(_TRANSPORT_TEXT.search(str(exc)))


def backoff_delays(initial: float, maximum: float, factor: float = 2.0):
    """Delays between reconnect attempts: initial, initial*factor, ... capped at maximum (an endless generator)."""
    if initial <= 0 or maximum < initial or factor < 1:
        raise ValueError(f"backoff needs 0 < initial <= maximum and factor >= 1, got {initial}, {maximum}, {factor}")
    d = initial
    while True:
        yield d
        d = min(maximum, d * factor)


# ---------------------------------------------------------------------------------------------------------------
# Position and resume


@dataclass
class Position:
    """Where a consumer is within one epoch: the epoch, the endpoint whose stream it is reading (several servers
    may each hold part of a rank's records), the last batch index received from that endpoint (-1: none yet) and
    the server's LoaderState JSON after that batch (None: none yet, so the endpoint starts from its beginning)."""

    epoch: int
    endpoint: int = 0
    last_index: int = -1
    state: Optional[Dict[str, Any]] = None
    batches: int = 0  # batches received this epoch over all endpoints

    def accept(self, meta: BatchMeta) -> None:
        """Record a batch the consumer is about to receive, after checking it continues the stream exactly.

        :raises ProtocolError: if the batch belongs to another epoch or does not follow the last one (a gap or a
            repeat would break exactly-once)
        """
        self.check(meta)
        self.last_index = meta.index
        self.state = meta.state
        self.batches += 1

    def check(self, meta: BatchMeta) -> None:
        """:meth:`accept`'s checks without recording the batch (:class:`ProtocolError` naming what is wrong)."""
        if meta.epoch != self.epoch:
            raise ProtocolError(f"batch {meta.index} is of epoch {meta.epoch}, but epoch {self.epoch} was requested")
        if meta.index != self.last_index + 1:
            what = "repeats" if meta.index <= self.last_index else "skips"
            raise ProtocolError(f"epoch {self.epoch} endpoint {self.endpoint}: batch index {meta.index} {what} "
                                f"(expected {self.last_index + 1} after {self.last_index})")
        if meta.state is None:
            raise ProtocolError(f"epoch {self.epoch} batch {meta.index}: app_metadata has no 'state', "
                                f"so it could not be resumed after")

    @property
    def endpoint_complete(self) -> bool:
        """Whether the last batch's state says its stream is over: a LoaderState saved after an epoch's last batch
        names the next epoch (``{"epoch": E+1, "batchesConsumed": 0}``), and the server refuses to resume from it."""
        st = self.state
        return st is not None and _is_int(st.get("epoch")) and st["epoch"] > self.epoch

    def next_endpoint(self) -> None:
        self.endpoint += 1
        self.last_index = -1
        self.state = None


def make_state_dict(fingerprint: Mapping[str, Any], next_epoch: int, position: Optional[Position]) -> Dict[str, Any]:
    """The client's checkpoint: the epoch to stream next and, mid-epoch, where to resume within it.

    ``position`` is the current epoch's position (None or no batch received: start ``next_epoch`` from its start).
    """
    d: Dict[str, Any] = {"version": STATE_DICT_VERSION, "loader": dict(fingerprint), "epoch": int(next_epoch),
                         "endpoint": 0, "last_index": -1, "batches": 0, "state": None}
    if position is not None and (position.batches > 0 or position.endpoint > 0):
        d.update(epoch=position.epoch, endpoint=position.endpoint, last_index=position.last_index,
                 batches=position.batches, state=None if position.state is None else dict(position.state))
    return d


def position_from_state_dict(d: Mapping[str, Any], fingerprint: Mapping[str, Any]) -> Position:
    """The position a ``state_dict()`` describes, checked against this loader's fingerprint.

    :raises ValueError: naming the field if the dict is malformed or was saved by a loader with other settings
        (dataset, batch size, sampler, ranks, columns, delivery-independent)
    """
    if not isinstance(d, Mapping):
        raise ValueError(f"state_dict must be a mapping, got {type(d).__name__}")
    if d.get("version") != STATE_DICT_VERSION:
        raise ValueError(f"state_dict version {d.get('version')!r} is not supported (expected {STATE_DICT_VERSION})")
    saved = d.get("loader")
    if not isinstance(saved, Mapping):
        raise ValueError("state_dict 'loader' is missing")
    for k, v in fingerprint.items():
        if saved.get(k) != v:
            raise ValueError(f"state_dict was saved by a loader with {k}={saved.get(k)!r}, this one has {k}={v!r}")
    for k in ("epoch", "endpoint", "last_index", "batches"):
        if not _is_int(d.get(k)):
            raise ValueError(f"state_dict '{k}' must be an integer, got {d.get(k)!r}")
    if d["epoch"] < 0 or d["endpoint"] < 0 or d["last_index"] < -1 or d["batches"] < 0:
        raise ValueError(f"state_dict has a negative position: {dict(d)!r:.300}")
    st = d.get("state")
    if st is not None and not isinstance(st, Mapping):
        raise ValueError(f"state_dict 'state' must be a LoaderState JSON object or None, got {st!r:.200}")
    if (st is None) != (d["last_index"] == -1):
        raise ValueError("state_dict 'state' and 'last_index' disagree (a state needs the index of its batch)")
    return Position(int(d["epoch"]), int(d["endpoint"]), int(d["last_index"]),
                    None if st is None else dict(st), int(d["batches"]))


# ---------------------------------------------------------------------------------------------------------------


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _text(v: Any) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v)


def _req_int(obj: Mapping[str, Any], key: str, minimum: Optional[int], where: str = "batch app_metadata") -> int:
    v = obj.get(key)
    if not _is_int(v):
        raise ProtocolError(f"{where} '{key}': expected an integer, got {v!r:.100}")
    if minimum is not None and v < minimum:
        raise ProtocolError(f"{where} '{key}': must be >= {minimum}, got {v}")
    return int(v)
