"""Float32 subnormals on the device under test.

Where a device offers SPIR-V's DenormPreserve mode for float32 (``info.float32_denormals ==
"preserve"``) every kompute_ml kernel requests it and subnormals are kept. Elsewhere the driver's
default holds (NVIDIA's drivers flush them to zero, lavapipe keeps them), and results computed
from or through subnormals follow it: the tests compare those against numpy on the inputs and
intermediates read as zeros of their sign (docs/arrays.md, "Float32 subnormals").
"""
import numpy as np

import kompute_ml as km

TINY = 2.0 ** -149              # the smallest float32 subnormal
FLT_MIN = 2.0 ** -126           # the smallest normal float32


def keeps_denormals(device=None):
    """Whether the device computes with float32 subnormals: by its DenormPreserve mode, else
    observed (no property reports the driver's default): a subnormal halved stays non-zero."""
    dev = km.get_device(device)
    if dev.info.float32_denormals == "preserve":
        return True
    x = km.asarray(np.array([TINY * 3], np.float32), device=dev)
    return float((x * 0.5).numpy()[0]) != 0.0


def flushed(x):
    """``x`` (any float dtype with float32's exponent range or less) with the values below
    FLT_MIN in magnitude replaced by zeros of their sign: how a flushing device reads them."""
    x = np.asarray(x)
    small = np.abs(x.astype(np.float64)) < FLT_MIN
    return np.where(small, np.copysign(np.zeros_like(x), x), x).astype(x.dtype)
