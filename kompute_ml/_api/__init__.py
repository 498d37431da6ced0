"""The Array API 2024.12 namespace and numpy's protocols (NEP 13/18), built on array.py.

namespace.py (creation, dtypes, inspection), elementwise.py, manipulation.py (concat, stack, sort,
set functions, scatter...), linalg.py, protocols.py (``__array_ufunc__``,
``__array_function__``) and indexing.py (advanced ``__getitem__``, ``__setitem__``). The Array's
protocol methods live in array.py, a layer below: importing this package registers the handlers they call (kompute_ml's ``__init__`` does).
"""

from .. import array as _array
from . import docstrings, indexing, linalg, namespace, protocols
from .elementwise import bitwise_left_shift, bitwise_right_shift

_array.register_protocols(array_ufunc=protocols.array_ufunc,
                          array_function=protocols.array_function,
                          namespace=namespace.namespace, getitem=indexing.getitem,
                          setitem=indexing.setitem,
                          shift_left=bitwise_left_shift, shift_right=bitwise_right_shift)
docstrings.apply(namespace, _array, linalg)
