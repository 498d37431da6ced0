"""Vulkan devices: enumeration, the choice of the default device, one kp.Manager each."""

import contextlib
import dataclasses
import os
import threading

import kompute_ml._runtime.kp as _kp   # (the kp wrapper; only it imports kp itself)
from .. import _locks
from .. import config as _config
from ..config import _values as _cfg
from . import clocks as _clocks
from . import vulkan as _vulkan
from ..errors import DeviceError, DeviceNotFoundError

__all__ = ["DeviceInfo", "Device", "devices", "get_device", "use_device", "on_close", "PerDevice"]

# Preference order of the default device: discrete > integrated > virtual > cpu > other.
GPU_SPIN_US = 2000     # a wait's fence polling on a GPU, µs (Device.spin_us)
_TYPE_RANK = {"discrete": 0, "integrated": 1, "virtual": 2, "cpu": 3, "other": 4}


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """What the Vulkan loader reports about one physical device.

    ``limits`` holds ``max_workgroup_size``, ``max_workgroup_invocations``,
    ``max_workgroup_count``, ``max_storage_buffer_range``, ``max_shared_memory``,
    ``max_push_constants_size``, ``subgroup_size``, ``float64`` and ``int64`` (the
    shaderFloat64 and shaderInt64 features), ``device_local_memory``...
    and the float-controls properties: ``denorm_preserve_float16/32/64``,
    ``denorm_flush_float32``, ``denorm_independence`` and ``float_controls_extension``.
    ``limits["float32_denormals"]`` (also :attr:`float32_denormals`) is the rule kompute_ml's
    kernels follow on the device: ``"preserve"`` where it offers SPIR-V's ``DenormPreserve``
    mode for float32 (every kernel requests it, so subnormals are kept as numpy keeps them),
    ``"driver"`` elsewhere (the driver's default: it may flush float32 subnormals to zero).

    Parameters
    ----------
    index : int
        Position in :func:`devices` (the index ``get_device`` and ``KOMPUTE_ML_DEVICE`` take).
    name, vendor, type, driver, api_version : str
        The device's name, vendor, type (``"discrete"``, ``"integrated"``, ``"virtual"``,
        ``"cpu"`` or ``"other"``), driver name and version, and Vulkan version.
    limits : dict
        The limits and properties above.

    Examples
    --------
    >>> import kompute_ml as km
    >>> info = km.devices()[0]
    >>> info.limits["max_storage_buffer_range"] > 0
    True
    >>> info.limits["float64"] in (True, False)
    True
    """

    index: int
    name: str
    vendor: str
    type: str
    driver: str
    api_version: str
    limits: dict

    def __str__(self):
        return f"[{self.index}] {self.name} ({self.type}, {self.vendor}, {self.driver})"

    @property
    def float32_denormals(self):
        """``"preserve"`` or ``"driver"``: see the class docstring."""
        return self.limits.get("float32_denormals", "driver")

    @property
    def denorm_preserve_widths(self):
        """The float widths kernels request ``DenormPreserve`` for on this device (() if none)."""
        return _vulkan.denorm_preserve_widths(self.limits)

    @property
    def signed_zero_widths(self):
        """The float widths kernels request ``SignedZeroInfNanPreserve`` for (() if none)."""
        return _vulkan.signed_zero_widths(self.limits)


_lock = _locks.make("the device registry", "registry", reentrant=True)
_infos = None          # list[DeviceInfo] once enumerated
_enum_error = None     # the reason enumeration failed, kept so every call says the same thing
_devices = {}          # index -> Device
_default = threading.local()
_global_default = [None]


VALIDATION_ENV = "KOMPUTE_ML_VALIDATION"


def _validation_layer():
    """KOMPUTE_ML_VALIDATION=1: the loader adds Khronos' validation layer to every instance this
    process creates from now on (it prints its messages to stdout unless a layer settings file
    says otherwise, as the test suite's does). The loader reads VK_INSTANCE_LAYERS at each
    vkCreateInstance, so this runs before the first one."""
    if _config.get("validation"):
        layers = [x for x in os.environ.get("VK_INSTANCE_LAYERS", "").split(":") if x]
        if "VK_LAYER_KHRONOS_validation" not in layers:
            os.environ["VK_INSTANCE_LAYERS"] = ":".join(layers + ["VK_LAYER_KHRONOS_validation"])


def devices():
    """List the Vulkan devices of this machine.

    Returns
    -------
    list of DeviceInfo
        One entry per physical device, in the loader's order (the index ``get_device`` takes).
        Empty when no Vulkan driver is usable (``get_device`` then says why).

    Examples
    --------
    >>> import kompute_ml as km
    >>> infos = km.devices()
    >>> [d.index for d in infos] == list(range(len(infos)))
    True
    >>> all(d.type in ("discrete", "integrated", "virtual", "cpu", "other") for d in infos)
    True
    """
    global _infos, _enum_error
    with _lock:
        if _infos is None and _enum_error is None:
            _validation_layer()
            try:
                _infos = [DeviceInfo(**d) for d in _vulkan.enumerate_devices()]
            except _vulkan.VulkanUnavailable as exc:
                _enum_error = str(exc)
        return list(_infos or [])


def _listing():
    infos = devices()
    if not infos:
        return f"no Vulkan device is usable: {_enum_error}"
    return "available devices: " + "; ".join(str(d) for d in infos)


def _resolve(spec):
    """Map a device spec (None, int, str, Device, DeviceInfo) to a DeviceInfo."""
    infos = devices()
    if not infos:
        raise DeviceNotFoundError(_listing())
    if isinstance(spec, Device):
        return spec.info
    if isinstance(spec, DeviceInfo):
        spec = spec.index
    if spec is None:
        spec = getattr(_default, "spec", None) or _global_default[0]
        if spec is None:
            spec = _config.get("device")
        if spec is None:
            return sorted(infos, key=lambda d: (_TYPE_RANK.get(d.type, 9), d.index))[0]
        if isinstance(spec, (Device, DeviceInfo)):
            return _resolve(spec)
    if isinstance(spec, bool) or not isinstance(spec, (int, str)):
        raise TypeError(f"device must be None, an int index or a name string, got {type(spec).__name__}")
    if isinstance(spec, str) and spec.strip().lstrip("-").isdigit():
        spec = int(spec)
    if isinstance(spec, int):
        if 0 <= spec < len(infos):
            return infos[spec]
        raise DeviceNotFoundError(f"device index {spec} is out of range; {_listing()}")
    key = spec.strip().lower()
    if key in ("cpu", "gpu"):
        wanted = ("cpu",) if key == "cpu" else ("discrete", "integrated", "virtual")
        hits = [d for d in infos if d.type in wanted]
        hits.sort(key=lambda d: (_TYPE_RANK.get(d.type, 9), d.index))
    else:
        hits = [d for d in infos if key in d.name.lower()]
    if not hits:
        raise DeviceNotFoundError(f"no device matches {spec!r}; {_listing()}")
    return hits[0]


HOST_IMPORT_ENV = "KOMPUTE_ML_HOST_IMPORT"


def _host_import_allowed():
    """The ``host_import`` option (KOMPUTE_ML_HOST_IMPORT: 1 or unset, the device may import
    numpy's pages for transfers, staging.py's rule decides; 0, every large transfer through the
    staging ring)."""
    return _config.get("host_import")


QUEUE_FAMILY_ENV = "KOMPUTE_ML_QUEUE_FAMILY"
_QUEUE_BITS = ((_vulkan.QUEUE_GRAPHICS, "graphics"), (_vulkan.QUEUE_COMPUTE, "compute"),
               (_vulkan.QUEUE_TRANSFER, "transfer"))


def _describe_families(families):
    return ", ".join(
        f"{i}: {'+'.join(name for bit, name in _QUEUE_BITS if flags & bit) or 'other'} "
        f"({count} queue{'s' if count != 1 else ''})" for i, (flags, count, _) in enumerate(families))


def queue_family(info):
    """The queue family a device's work is submitted to: KOMPUTE_ML_QUEUE_FAMILY unset or "auto"
    (a compute family without graphics where the device has one: vulkan.compute_queue_family),
    or a family's index, which must offer compute (a kp.Manager on a transfer-only family lost
    the GPU at its first dispatch)."""
    index = _config.get("queue_family")
    families = info.limits.get("queue_families") or ()
    if index == "auto":
        return info.limits.get("compute_queue_family")
    if not 0 <= index < len(families) or not _vulkan.offers_compute(families[index]):
        raise ValueError(f"{QUEUE_FAMILY_ENV}={index}: {info.name!r} has no compute queue family "
                         f"{index} (its families: {_describe_families(families) or 'none'})")
    return index


class Device:
    """One Vulkan device and its kp.Manager (created on first use, then reused).

    Get one with :func:`get_device`, which returns the same object for the same physical
    device; arrays, kernels and estimators take it as ``device=``.

    Parameters
    ----------
    info : DeviceInfo
        The physical device (one of :func:`devices`).

    Attributes
    ----------
    info : DeviceInfo
        What the loader reports about it.
    index, name : int, str
        ``info.index`` and ``info.name``.

    Examples
    --------
    >>> import kompute_ml as km
    >>> dev = km.get_device()
    >>> dev.info.index == dev.index and dev.name == dev.info.name
    True
    >>> km.zeros(4, device=dev).device == dev
    True
    """

    def __init__(self, info):
        self.info = info
        self.index = info.index
        self.name = info.name
        # kp is not thread-safe: every kp call on this device holds it
        self.lock = _locks.make(f"device {info.index}", "device", reentrant=True, key=id(self))
        self._manager = None
        self._closed = False
        lim = info.limits
        self.max_groups = tuple(int(x) for x in lim["max_workgroup_count"])
        self.max_buffer_bytes = int(lim["max_storage_buffer_range"])
        self.max_workgroup_invocations = int(lim["max_workgroup_invocations"])
        self.subgroup_size = lim.get("subgroup_size") or 0
        self.max_shared_memory = int(lim["max_shared_memory"])
        # kernels request DenormPreserve for these float widths (the stream layer adds it)
        self.denorm_preserve_widths = info.denorm_preserve_widths
        self.signed_zero_widths = info.signed_zero_widths
        # large transfers copy straight between numpy's pages and the device (staging.py): set
        # with the manager where the device offers VK_EXT_external_memory_host and kp has patch
        # 0015; KOMPUTE_ML_HOST_IMPORT=0 turns it off (every transfer through the staging ring)
        self.host_import = False
        # the queue family its work goes to (queue_family; set with the manager)
        self.queue_family = None
        # the NVIDIA clock hold begun when the manager is made (clocks.start; see clock_hold)
        self._clock = None

    @property
    def limits(self):
        return self.info.limits

    @property
    def manager(self):
        """The kp.Manager of this device, created by the first read (under the device's lock),
        which opens the device. Its side effects, all of them (docs/install.md lists them with
        how to turn each off):

        - the Vulkan device is created on the queue family ``queue_family`` picks, with
          VK_KHR_shader_float_controls where kernels need it and VK_EXT_external_memory_host
          where the driver has it and the ``host_import`` option allows it;
        - the enumeration's Vulkan instance (vulkan.py) is released (kp's has the drivers now);
        - with the ``validation`` option on, VK_INSTANCE_LAYERS of this process gets
          VK_LAYER_KHRONOS_validation before the first instance is made (the loader reads only
          the environment: kp is built without its own debug-layer list) -- the one environment
          edit the library makes, and only on request;
        - on an NVIDIA GPU, with the ``hold_clocks`` option on (default), a thread of its own
          loads the driver's ``libcuda.so.1`` and retains the GPU's primary CUDA context
          (about 0.5 GiB of device memory) until the device closes, so that the GPU keeps its
          clocks between bursts of work (clocks.py; decisions 0004, 0015);
        - on a GPU, with the ``avoid_irq_cpus`` option on (default), ``/proc/interrupts`` is
          read and the CPUs taking the GPU driver's interrupts are handed to kp: threads
          waiting for the GPU and the native copy workers move off them (decision 0005).

        Nothing else of the process (signal handlers, other environment variables, thread
        affinities outside kp's waits and the copy workers) is touched. A closed device
        raises DeviceError."""
        if self._closed:
            raise DeviceError(f"device {self.name!r} was closed")
        if self._manager is None:
            with self.lock:
                if self._manager is None:
                    _validation_layer()
                    # the DenormPreserve mode is Vulkan 1.2; kp's instance is 1.1, so the
                    # device needs VK_KHR_shader_float_controls for it
                    ext = [_vulkan.FLOAT_CONTROLS_EXTENSION] \
                        if self.denorm_preserve_widths or self.signed_zero_widths else []
                    self.host_import = bool(self.limits.get("host_import_extension")) and \
                        _host_import_allowed()
                    avoid_irq = _avoid_irq_allowed()
                    _clocks.hold_allowed()      # (a bad KOMPUTE_ML_HOLD_CLOCKS raises first)
                    if self.host_import:
                        ext.append(_vulkan.HOST_IMPORT_EXTENSION)
                    family = queue_family(self.info)
                    try:
                        self._manager = _kp.make_manager(self.index, self.name, ext, family)
                    finally:
                        # kp's instance has the drivers loaded now (or failed): the
                        # enumeration's instance, kept for that, is not needed any more
                        _vulkan.release_enumeration()
                    # the clock hold begins once the Vulkan device is made, on a thread of its
                    # own while the first work runs (decision 0015)
                    self._clock = _clocks.start(self.info.vendor, self.info.type,
                                                self.limits.get("device_uuid"))
                    self.queue_family = family
                    if avoid_irq and self.info.type != "cpu":
                        _avoid_interrupt_cpus(self.info)
        return self._manager

    @property
    def clock_hold(self):
        """Whether this NVIDIA GPU is held at its application clocks (``_runtime/clocks.py``):
        "held", or why not; None until the device is opened. The hold is made on a thread of
        its own while the first work runs: reading this waits for it."""
        clock = self._clock
        return None if clock is None else clock.result()

    @property
    def spin_us(self):
        """How long a wait for this device's work polls its fence before it blocks, in µs (set
        on each sequence), or None where KP_SEQUENCE_SPIN_US is set (kp reads it once per
        process: the user's value, for every device). On a CPU device (lavapipe) the poll
        competes with the driver's own worker threads: none. On a GPU, longer than kp's 200: a
        streaming kernel over a few hundred MB outlasts that, and a blocking wait wakes tens of
        µs late (decision 0020). A process holding both kinds polls each as it should (the
        process-wide variable could not)."""
        if "KP_SEQUENCE_SPIN_US" in os.environ:
            return None
        return 0 if self.info.type == "cpu" else GPU_SPIN_US

    @property
    def closed(self):
        return self._closed

    def close(self):
        """Release the device's pipelines, buffers and manager; later use raises DeviceError.

        Safe while other threads use the device: their calls finish first or raise
        DeviceError. The upper layers' locks (``lock_outer``) are taken before the device's
        own, as every other path takes them, since the close hooks reach those layers' state.
        """
        with locked_in_order(self):
            if self._closed:
                return
            for _, _, hook in sorted(_close_hooks):
                hook(self)
            self._closed = True
            if self._manager is not None:
                _kp.destroy_manager(self._manager)
                self._manager = None
            if self._clock is not None and self._clock.result() == _clocks.HELD:
                _clocks.release(self.limits.get("device_uuid"))
        with _lock:
            if _devices.get(self.index) is self:
                del _devices[self.index]

    def __repr__(self):
        return f"<kompute_ml.Device {self.index}: {self.name} ({self.info.type})>"

    # A Device holds a kp.Manager and a lock, neither of which can cross processes: it pickles
    # by its description and unpickles to the matching device of the receiving process, and
    # copies are the device itself (an estimator's ``device=`` survives clone, joblib, Dask).
    def __reduce__(self):
        return (_device_from_description, (self.index, self.name))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


# A thread polling a GPU's fence on the CPU that takes the GPU's interrupts is preempted by the
# driver's interrupt work just as the fence signals (decision 0005). Opening a GPU hands the
# CPUs of its driver's interrupts to kp, whose waits move a thread found on one of them off it
# before they poll (the thread's affinity mask is restored at once) and whose copy workers keep
# off them. The avoid_irq_cpus option (KOMPUTE_ML_AVOID_IRQ_CPUS=0) turns it off.
AVOID_IRQ_ENV = "KOMPUTE_ML_AVOID_IRQ_CPUS"
_IRQ_DRIVERS = {"NVIDIA": ("nvidia", "nouveau"), "AMD": ("amdgpu", "radeon"),
                "Intel": ("i915", "xe")}


def _cpu_list(text):
    """The CPUs of a kernel CPU list ("0-3,8")."""
    cpus = set()
    for item in text.strip().split(","):
        if not item:
            continue
        lo, _, hi = item.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def interrupt_cpus(drivers, interrupts="/proc/interrupts", irq_dir="/proc/irq"):
    """The CPUs that take the interrupts of the kernel drivers named in ``drivers``: for each
    line of ``interrupts`` whose last field is one of them and whose counts are not all zero,
    the IRQ's effective affinity (``irq_dir``/N/effective_affinity_list), else the CPUs its
    counts show. An empty set where the files cannot be read (not Linux, a sandbox)."""
    cpus = set()
    try:
        with open(interrupts) as f:
            columns = [int(c[3:]) for c in f.readline().split() if c.startswith("CPU")]
            lines = f.readlines()
    except (OSError, ValueError):
        return cpus
    for line in lines:
        fields = line.split()
        if len(fields) < 2 or not fields[0].endswith(":") or not fields[0][:-1].isdigit() or \
                fields[-1] not in drivers:
            continue
        counts = [int(x) for x in fields[1:1 + len(columns)] if x.isdigit()]
        if not any(counts):
            continue
        try:
            with open(os.path.join(irq_dir, fields[0][:-1], "effective_affinity_list")) as f:
                cpus |= _cpu_list(f.read())
        except (OSError, ValueError):
            cpus.update(cpu for cpu, n in zip(columns, counts) if n)
    return cpus


def _avoid_irq_allowed():
    """The ``avoid_irq_cpus`` option (KOMPUTE_ML_AVOID_IRQ_CPUS: 1 or unset, waits keep off the
    GPU's interrupt CPUs; 0, not); checked when a device opens."""
    return _config.get("avoid_irq_cpus")


def _avoid_interrupt_cpus(info):
    """Add the CPUs of ``info``'s driver's interrupts to kp's avoided CPUs (see above)."""
    if info.vendor not in _IRQ_DRIVERS:
        return
    cpus = interrupt_cpus(_IRQ_DRIVERS[info.vendor])
    if cpus:
        before = _kp.avoid_cpus()
        if before is not None and not cpus <= set(before):
            _kp.avoid_cpus(sorted(cpus | set(before)))


def describe_pair(a, b):
    """Two devices named for a "different devices" error, telling apart two Device objects of
    one physical device (each has its own kp.Manager, so their buffers do not mix)."""
    text = f"{a.name!r} (device {a.index}) and {b.name!r} (device {b.index})"
    if a.index == b.index:
        text += (": two Device objects for the same physical device, each with its own "
                 "kp.Manager (use km.get_device(...) to share one)")
    return text


# (order, registration number, fn): upper layers drop their per-device state on close
_close_hooks = []
# upper layers' locks that Device.close takes before the device's own (kompute_ml/_locks.py)
_outer_locks = []

# on_close orders of the runtime's layers: pending work is submitted before the pool it uses goes
CLOSE_STREAM = 0
CLOSE_MEMORY = 100


def on_close(fn, order):
    """Call ``fn(device)`` when a Device closes, before its manager goes; lower ``order`` first.

    The stream layer registers at CLOSE_STREAM (submit pending work, drop pipelines), the memory
    layer at CLOSE_MEMORY (drop the pool): work still recorded must run while its tensors exist.
    Registering the same ``fn`` again is a no-op.
    """
    with _lock:
        if all(hook is not fn for _, _, hook in _close_hooks):
            _close_hooks.append((int(order), len(_close_hooks), fn))


@contextlib.contextmanager
def locked_in_order(device):
    """Hold the upper layers' locks (``lock_outer``) and then ``device``'s: for a caller that
    runs upper-layer work (a close hook, a realization) while it holds the device's lock."""
    with contextlib.ExitStack() as held:
        for lock in list(_outer_locks):
            held.enter_context(lock)
        held.enter_context(device.lock)
        yield


def lock_outer(lock):
    """Have Device.close take ``lock`` (an upper layer's, ranked before ``device``) before the
    device's lock: its close hook takes ``lock``, and its users take it before the device's."""
    with _lock:
        if all(other is not lock for other in _outer_locks):
            _outer_locks.append(lock)


class PerDevice:
    """State of one layer per Device object, made by ``factory(device)`` on first use.

    Keyed by the Device object, not its index: two Device objects are two kp.Managers. The fast
    path (state exists) takes no lock; creation is double-checked under one.
    """

    def __init__(self, factory, *, closed_ok=True, order=0):
        self._factory = factory
        self._closed_ok = closed_ok     # False: a closed device gets DeviceError, not new state
        # (never rebound: a per-op path reads it as ``_items.get(device) or get(device)``)
        self._items = {}
        # ``order``: the lock order of nested creations (kompute_ml/_locks.py)
        self._lock = _locks.make(f"{factory.__qualname__}'s per-device state", "per-device",
                                 key=order)

    def get(self, device):
        """The state of ``device``, created when missing."""
        item = self._items.get(device)
        if item is None:
            if not self._closed_ok and device.closed:
                raise DeviceError(f"device {device.name!r} was closed")
            with self._lock:
                item = self._items.get(device)
                if item is None:
                    item = self._items[device] = self._factory(device)
        return item

    def peek(self, device):
        """The state of ``device``, or None (never creates it)."""
        return self._items.get(device)

    def pop(self, device):
        """Remove and return the state of ``device`` (None when it has none)."""
        with self._lock:
            return self._items.pop(device, None)

    def values(self):
        """The states that exist now (a list: safe while other threads add)."""
        return list(self._items.values())


def get_device(spec=None):
    """Return the device ``spec`` names, or the default device.

    Parameters
    ----------
    spec : None, int or str, default=None
        ``None``: the device set by ``use_device``, else env ``KOMPUTE_ML_DEVICE``, else the best
        device (discrete > integrated > virtual > cpu). An int is an index into ``devices()``;
        a str is an index, ``"cpu"``, ``"gpu"`` or a case-insensitive substring of the name.

    Returns
    -------
    Device
        The device (one object per physical device and process; its Vulkan device is made on
        first use).

    Raises
    ------
    DeviceNotFoundError
        Nothing matches (the message lists the devices that exist) or no driver is usable.

    Examples
    --------
    >>> import kompute_ml as km
    >>> dev = km.get_device()
    >>> km.get_device(dev.index) is dev
    True
    >>> km.asarray([1.0]).device == dev
    True
    """
    global _env_default
    env = generation = None
    if spec is None:
        # use_device(Device(...)) means that Device object, not the registry's one of its index
        spec = getattr(_default, "spec", None) or _global_default[0]
        if spec is None:
            # the default by the device option (or the best device), found once per value of it:
            # km.asarray(x) asks for it every call
            env, generation = _device_env(), _cfg.generation
            raw, seen, dev = _env_default
            if dev is not None and raw == env and seen == generation and not dev._closed:
                return dev
    if isinstance(spec, Device) and not spec.closed:
        return spec
    info = _resolve(spec)
    with _lock:
        dev = _devices.get(info.index)
        if dev is None:
            dev = _devices[info.index] = Device(info)
    if spec is None:
        _env_default = (env, generation, dev)
    return dev


# get_device's default while no use_device is in force: (KOMPUTE_ML_DEVICE as _device_env reads
# it, config.generation, the Device)
_env_default = (None, 0, None)
_device_env = _config.env_reader("device")


def _device_from_description(index, name):
    """The device of this process described by (index, name): the same index and name, else the
    first device of that name; DeviceNotFoundError (listing the devices) when none matches."""
    infos = devices()
    for info in infos:
        if info.index == index and info.name == name:
            return get_device(info.index)
    for info in infos:
        if info.name == name:
            return get_device(info.index)
    raise DeviceNotFoundError(f"no device named {name!r} (index {index} where it was pickled); "
                              f"{_listing()}")


def default_is_pinned():
    """Whether this process or thread names its default device (use_device, KOMPUTE_ML_DEVICE),
    as each worker of a VulkanCluster does."""
    return (getattr(_default, "spec", None) is not None or _global_default[0] is not None
            or _config.get("device") is not None)


def find_device(index, name):
    """Like ``_device_from_description`` but None when nothing matches (arrays fall back)."""
    try:
        return _device_from_description(index, name)
    except DeviceNotFoundError:
        return None


class _UseDevice(contextlib.AbstractContextManager):
    def __init__(self, spec):
        self._previous = (getattr(_default, "spec", None), _global_default[0])
        get_device(spec)                      # fail now, naming the devices, if spec is wrong
        self._spec = spec
        _default.spec = spec
        _global_default[0] = spec

    def __exit__(self, *exc):
        _default.spec, _global_default[0] = self._previous
        return False


def use_device(spec):
    """Make ``spec`` the default device; also a context manager restoring the previous one.

    Parameters
    ----------
    spec : None, int, str or Device
        As :func:`get_device`'s argument; it is checked at once (``DeviceNotFoundError``).

    Returns
    -------
    context manager
        Used in a ``with`` statement, the previous default comes back at its end; called plainly,
        ``spec`` stays the default (of every thread without one of its own).

    Examples
    --------
    >>> import kompute_ml as km
    >>> last = km.devices()[-1].index
    >>> with km.use_device(last):
    ...     a = km.ones(3)
    >>> a.device == km.get_device(last)
    True
    """
    return _UseDevice(spec)
