"""``km.benchmark``: the wall-clock and device time of a function, as ``cupyx.profiler.benchmark``."""

import math
import time

import numpy as np

from . import array as _array
from ._runtime import device as _device
from ._runtime import stream as _stream

__all__ = ["benchmark", "BenchmarkResult"]


class BenchmarkResult:
    """What :func:`benchmark` measured: one wall time and one device time per repeat.

    Attributes
    ----------
    name : str
        The name given to :func:`benchmark`, else the function's ``__name__``.
    device_name : str
        The Vulkan device the work ran on.
    wall_times : numpy.ndarray of float64
        Seconds from the call to its results being computed on the device, one per repeat.
    device_times : numpy.ndarray of float64
        Seconds between the device's timestamps around the work, one per repeat; empty where
        they cannot be taken (see :func:`benchmark`).
    """

    def __init__(self, name, device_name, wall_times, device_times):
        self.name = name
        self.device_name = device_name
        self.wall_times = np.asarray(wall_times, dtype=np.float64)
        self.device_times = np.asarray(device_times, dtype=np.float64)

    @property
    def wall_median(self):
        """Median of :attr:`wall_times` in seconds."""
        return float(np.median(self.wall_times))

    @property
    def device_median(self):
        """Median of :attr:`device_times` in seconds (NaN where there are none)."""
        return float(np.median(self.device_times)) if self.device_times.size else math.nan

    def to_dict(self):
        """The result as plain Python values (seconds), for JSON."""
        return {"name": self.name, "device": self.device_name, "n_repeat": int(self.wall_times.size),
                "wall_s": self.wall_times.tolist(), "device_s": self.device_times.tolist(),
                "wall_median_s": self.wall_median,
                "device_median_s": None if math.isnan(self.device_median) else self.device_median}

    def __repr__(self):
        def fmt(t):
            if not t.size:
                return "n/a"
            return (f"{_us(np.median(t))} (min {_us(t.min())}, max {_us(t.max())})")
        return (f"{self.name}: wall {fmt(self.wall_times)}  device {fmt(self.device_times)}  "
                f"n={self.wall_times.size}")


def _us(seconds):
    return f"{seconds * 1e6:10.1f} us"


def _realize(out):
    """Compute every Array in ``out`` (an Array, or a tuple / list / dict holding some)."""
    if isinstance(out, _array.Array):
        _array.buffer_of(out)
    elif isinstance(out, (tuple, list)):
        for x in out:
            _realize(x)
    elif isinstance(out, dict):
        for x in out.values():
            _realize(x)


def benchmark(fn, *args, kwargs=None, n_repeat=100, n_warmup=10, max_duration=math.inf,
              name=None, device=None):
    """Time ``fn(*args, **kwargs)`` on a Vulkan device: wall clock and device time per repeat.

    Each repeat calls ``fn``, computes every kompute_ml Array it returns (a lazy result would
    otherwise not run) and waits for the device (:func:`kompute_ml.synchronize`): its wall time is
    what a user's program waits for the result to exist on the device (a result read back to the
    host inside ``fn`` counts too). A second series of repeats records the same work into a
    submit of its own between two Vulkan timestamps: the device time. That is only possible when
    the work fits one submit; where ``fn`` reads a result back (which submits), or the device has
    no timestamps, ``device_times`` is empty.

    Parameters
    ----------
    fn : callable
        The work to time. It returns Arrays (computed by the timer), or anything else.
    *args
        Positional arguments of ``fn``.
    kwargs : dict, optional
        Keyword arguments of ``fn``.
    n_repeat : int, default=100
        Timed repeats (each series).
    n_warmup : int, default=10
        Untimed calls first: they compile the kernels and fill the pipeline cache and the pool.
    max_duration : float, default=inf
        Seconds after which each series stops early (at least one repeat runs).
    name : str, optional
        The result's name; default: ``fn.__name__``.
    device : None, int, str or Device, optional
        The device to wait for and take timestamps on (:func:`kompute_ml.get_device`'s
        argument); default: the default device.

    Returns
    -------
    BenchmarkResult
        ``wall_times`` and ``device_times`` in seconds, their medians, and the device's name.

    Examples
    --------
    >>> import kompute_ml as km
    >>> a = km.ones(1 << 16)
    >>> r = km.benchmark(lambda x: km.exp(x * 2 + 1), a, n_repeat=5, n_warmup=1)
    >>> r.wall_times.shape
    (5,)
    >>> bool(r.wall_median > 0)
    True
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if isinstance(n_repeat, bool) or not isinstance(n_repeat, int) or n_repeat < 1:
        raise ValueError(f"n_repeat must be a positive int, got {n_repeat!r}")
    if isinstance(n_warmup, bool) or not isinstance(n_warmup, int) or n_warmup < 0:
        raise ValueError(f"n_warmup must be a non-negative int, got {n_warmup!r}")
    if not max_duration > 0:
        raise ValueError(f"max_duration must be positive, got {max_duration!r}")
    kwargs = {} if kwargs is None else dict(kwargs)
    dev = _device.get_device(device)
    name = name if name is not None else getattr(fn, "__name__", "fn")

    def call():
        _realize(fn(*args, **kwargs))

    for _ in range(n_warmup):
        call()
        _stream.synchronize(dev)

    wall = []
    start = time.perf_counter()
    for _ in range(n_repeat):
        t0 = time.perf_counter()
        call()
        _stream.synchronize(dev)
        wall.append(time.perf_counter() - t0)
        if time.perf_counter() - start > max_duration:
            break

    on_device = []
    if float(dev.limits.get("timestamp_period_ns") or 0) > 0:
        start = time.perf_counter()
        for _ in range(len(wall)):
            try:
                t = _stream.device_time(dev, call)
            except ValueError:      # the work spans more than one submit: no device time
                on_device = []
                break
            if math.isnan(t):
                on_device = []
                break
            on_device.append(t)
            if time.perf_counter() - start > max_duration:
                break
    return BenchmarkResult(name, dev.name, wall, on_device)
