"""Python client of the gds-loader prefetch service (Arrow Flight, protocol version 3).

``FlightLoader`` streams a dataset's batches from ``gdsloader serve`` as torch tensors (or numpy / CuPy arrays):
HOST delivery over ``pyarrow.flight`` DoGet, CUDA_IPC delivery (same host) over DoExchange with the columns left in
the server's GPU memory. See README.md in clients/python.
"""

from .protocol import PROTOCOL_VERSION, ProtocolError
from .loader import Batch, FlightLoader, ReconnectError

__all__ = ["FlightLoader", "Batch", "ProtocolError", "ReconnectError", "PROTOCOL_VERSION"]
__version__ = "0.1.0"
