"""HOST delivery: a Flight record batch -> numpy arrays (zero-copy views of the Arrow buffers) or torch tensors.

pyarrow is imported lazily (only when a batch is converted), so the pure parts of the package work without it.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .protocol import (META_VERSION, PADDING_COLUMN, PROTOCOL_VERSION, RECORD_COLUMN, ColumnSpec, DType,
                       ProtocolError, column_spec, dtype_of, numpy_dtype)


def schema_specs(schema: Any) -> List[ColumnSpec]:
    """The dataset columns of a HOST stream's Arrow schema (every field but ``_record`` and ``_padding``).

    :raises ProtocolError: if the schema's ``gdsloader.version`` is not 3, the bookkeeping columns are missing, or
        a column's type or metadata is not what the contract describes
    """
    import pyarrow as pa

    md = {(k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
          for k, v in (schema.metadata or {}).items()}
    if META_VERSION in md and md[META_VERSION] != str(PROTOCOL_VERSION):
        raise ProtocolError(f"server speaks gdsloader protocol version {md[META_VERSION]}, this client "
                            f"{PROTOCOL_VERSION}")
    names = schema.names
    for required, check in ((RECORD_COLUMN, pa.types.is_int64), (PADDING_COLUMN, pa.types.is_boolean)):
        if required not in names:
            raise ProtocolError(f"stream schema has no '{required}' column: {names}")
        if not check(schema.field(required).type):
            raise ProtocolError(f"column '{required}' has type {schema.field(required).type}")
    specs = []
    for f in schema:
        if f.name in (RECORD_COLUMN, PADDING_COLUMN):
            continue
        t = f.type
        list_size = None
        leaf = t
        while pa.types.is_fixed_size_list(leaf):
            list_size = (list_size or 1) * leaf.list_size
            leaf = leaf.value_type
        specs.append(column_spec(f.name, f.metadata, list_size, str(t)))
    return specs


def _leaf(arr: Any) -> Tuple[Any, int, int]:
    """(leaf array, logical index of the first element in the leaf, element count) of a possibly nested
    FixedSizeList array, following offsets (``FixedSizeListArray.values`` ignores the list array's offset)."""
    import pyarrow as pa

    first, count, a = 0, len(arr), arr
    while pa.types.is_fixed_size_list(a.type):
        n = a.type.list_size
        first = (a.offset + first) * n
        count *= n
        a = a.values
    return a, first, count


def column_to_numpy(arr: Any, dt: DType, name: str) -> np.ndarray:
    """The flat values of one column as a numpy array: a read-only zero-copy view of the Arrow data buffer for
    fixed-width types (copied only if the buffer is misaligned for the element size), a copy for BOOL (Arrow
    packs booleans into bits).

    :raises ProtocolError: on nulls, or a leaf type whose width disagrees with ``dt``
    """
    import pyarrow as pa

    leaf, first, count = _leaf(arr)
    if leaf.null_count:
        raise ProtocolError(f"column '{name}' has {leaf.null_count} null values (the contract's columns are "
                            f"non-nullable)")
    if pa.types.is_boolean(leaf.type):
        if dt.name != "BOOL":
            raise ProtocolError(f"column '{name}' is Arrow bool but its metadata says {dt.name}")
        return leaf.slice(first, count).to_numpy(zero_copy_only=False).astype(np.bool_, copy=False)
    try:
        width = leaf.type.bit_width
    except (AttributeError, ValueError):
        raise ProtocolError(f"column '{name}': Arrow values of type {leaf.type} are not fixed-width") from None
    if width != 8 * dt.itemsize:
        raise ProtocolError(f"column '{name}': Arrow values of type {leaf.type} are {width} bits wide, but "
                            f"{dt.name} is {8 * dt.itemsize}")
    data = leaf.buffers()[1]
    start = (leaf.offset + first) * dt.itemsize
    if data is None or data.size < start + count * dt.itemsize:
        have = 0 if data is None else data.size
        raise ProtocolError(f"column '{name}': data buffer of {have} bytes is shorter than the {count} values at "
                            f"byte {start} the batch needs")
    out = np.frombuffer(data, dtype=numpy_dtype(dt), count=count, offset=start)
    if dt.itemsize > 1 and out.ctypes.data % dt.itemsize:
        out = out.copy()
    return out


class HostBatchData:
    """The arrays of one HOST record batch: ``columns`` (name -> array shaped ``[rows, *record shape]``),
    ``records`` (int64 ``[rows]``, global record indices) and ``is_padding`` (bool ``[rows]``)."""

    __slots__ = ("columns", "records", "is_padding", "rows")

    def __init__(self, columns: Dict[str, Any], records: Any, is_padding: Any, rows: int):
        self.columns = columns
        self.records = records
        self.is_padding = is_padding
        self.rows = rows


def batch_to_numpy(rb: Any, specs: List[ColumnSpec]) -> HostBatchData:
    """Numpy views of one record batch's columns, shaped per the specs.

    :raises ProtocolError: if a column is missing or its length disagrees with the batch's rows
    """
    rows = rb.num_rows
    cols: Dict[str, np.ndarray] = {}
    for spec in specs:
        idx = rb.schema.get_field_index(spec.name)
        if idx < 0:
            raise ProtocolError(f"record batch has no column '{spec.name}' (schema: {rb.schema.names})")
        flat = column_to_numpy(rb.column(idx), spec.dtype, spec.name)
        if flat.size != rows * spec.elements:
            raise ProtocolError(f"column '{spec.name}': {flat.size} values for {rows} rows of shape {list(spec.shape)}")
        cols[spec.name] = flat.reshape((rows,) + tuple(spec.shape))
    records = column_to_numpy(rb.column(rb.schema.get_field_index(RECORD_COLUMN)), dtype_of("INT64"), RECORD_COLUMN)
    padding = column_to_numpy(rb.column(rb.schema.get_field_index(PADDING_COLUMN)), dtype_of("BOOL"), PADDING_COLUMN)
    if records.size != rows or padding.size != rows:
        raise ProtocolError(f"'{RECORD_COLUMN}'/'{PADDING_COLUMN}' have {records.size}/{padding.size} values for "
                            f"{rows} rows")
    return HostBatchData(cols, records, padding, rows)


def numpy_to_torch(arr: np.ndarray, dt: Optional[DType] = None) -> Any:
    """A CPU torch tensor sharing ``arr``'s memory (no copy); bfloat16 / float8 columns are reinterpreted from
    their same-size integer view. The tensor must not be written: it may view a read-only Arrow buffer."""
    import torch

    with warnings.catch_warnings():
        # torch warns that the array is read-only (Arrow buffers are); the tensor shares it read-only by contract.
        warnings.simplefilter("ignore", UserWarning)
        t = torch.from_numpy(arr)
    if dt is not None and not dt.native_in_numpy:
        torch_dtype = getattr(torch, dt.torch, None)
        if torch_dtype is None:
            raise TypeError(f"this torch has no dtype torch.{dt.torch} for a {dt.name} column")
        t = t.view(torch_dtype)
    return t
