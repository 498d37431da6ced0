"""Enumerate Vulkan physical devices through the loader with ctypes, before any kp.Manager exists.

kp 0.9 ignores a failed vkCreateInstance and the process then aborts inside the loader, and its
get_device_properties() lacks the device type, vendor and most limits. So we ask the loader
ourselves: a failure here is a return code we can turn into a Python exception.
"""

import atexit
import ctypes
import ctypes.util
import os
import threading

from .. import config as _config

u32, i32, u64, f32, sz = ctypes.c_uint32, ctypes.c_int32, ctypes.c_uint64, ctypes.c_float, ctypes.c_size_t

# VkPhysicalDeviceLimits, field for field (vulkan_core.h; the struct is ABI-stable since 1.0).
# Each entry: name, type code (I=u32, i=i32, Q=u64, f=f32, z=size_t), array length.
_LIMITS = """
maxImageDimension1D I;maxImageDimension2D I;maxImageDimension3D I;maxImageDimensionCube I;
maxImageArrayLayers I;maxTexelBufferElements I;maxUniformBufferRange I;maxStorageBufferRange I;
maxPushConstantsSize I;maxMemoryAllocationCount I;maxSamplerAllocationCount I;
bufferImageGranularity Q;sparseAddressSpaceSize Q;maxBoundDescriptorSets I;
maxPerStageDescriptorSamplers I;maxPerStageDescriptorUniformBuffers I;
maxPerStageDescriptorStorageBuffers I;maxPerStageDescriptorSampledImages I;
maxPerStageDescriptorStorageImages I;maxPerStageDescriptorInputAttachments I;maxPerStageResources I;
maxDescriptorSetSamplers I;maxDescriptorSetUniformBuffers I;maxDescriptorSetUniformBuffersDynamic I;
maxDescriptorSetStorageBuffers I;maxDescriptorSetStorageBuffersDynamic I;
maxDescriptorSetSampledImages I;maxDescriptorSetStorageImages I;maxDescriptorSetInputAttachments I;
maxVertexInputAttributes I;maxVertexInputBindings I;maxVertexInputAttributeOffset I;
maxVertexInputBindingStride I;maxVertexOutputComponents I;maxTessellationGenerationLevel I;
maxTessellationPatchSize I;maxTessellationControlPerVertexInputComponents I;
maxTessellationControlPerVertexOutputComponents I;maxTessellationControlPerPatchOutputComponents I;
maxTessellationControlTotalOutputComponents I;maxTessellationEvaluationInputComponents I;
maxTessellationEvaluationOutputComponents I;maxGeometryShaderInvocations I;
maxGeometryInputComponents I;maxGeometryOutputComponents I;maxGeometryOutputVertices I;
maxGeometryTotalOutputComponents I;maxFragmentInputComponents I;maxFragmentOutputAttachments I;
maxFragmentDualSrcAttachments I;maxFragmentCombinedOutputResources I;maxComputeSharedMemorySize I;
maxComputeWorkGroupCount I3;maxComputeWorkGroupInvocations I;maxComputeWorkGroupSize I3;
subPixelPrecisionBits I;subTexelPrecisionBits I;mipmapPrecisionBits I;maxDrawIndexedIndexValue I;
maxDrawIndirectCount I;maxSamplerLodBias f;maxSamplerAnisotropy f;maxViewports I;
maxViewportDimensions I2;viewportBoundsRange f2;viewportSubPixelBits I;minMemoryMapAlignment z;
minTexelBufferOffsetAlignment Q;minUniformBufferOffsetAlignment Q;minStorageBufferOffsetAlignment Q;
minTexelOffset i;maxTexelOffset I;minTexelGatherOffset i;maxTexelGatherOffset I;
minInterpolationOffset f;maxInterpolationOffset f;subPixelInterpolationOffsetBits I;
maxFramebufferWidth I;maxFramebufferHeight I;maxFramebufferLayers I;framebufferColorSampleCounts I;
framebufferDepthSampleCounts I;framebufferStencilSampleCounts I;
framebufferNoAttachmentsSampleCounts I;maxColorAttachments I;sampledImageColorSampleCounts I;
sampledImageIntegerSampleCounts I;sampledImageDepthSampleCounts I;sampledImageStencilSampleCounts I;
storageImageSampleCounts I;maxSampleMaskWords I;timestampComputeAndGraphics I;timestampPeriod f;
maxClipDistances I;maxCullDistances I;maxCombinedClipAndCullDistances I;discreteQueuePriorities I;
pointSizeRange f2;lineWidthRange f2;pointSizeGranularity f;lineWidthGranularity f;strictLines I;
standardSampleLocations I;optimalBufferCopyOffsetAlignment Q;optimalBufferCopyRowPitchAlignment Q;
nonCoherentAtomSize Q
"""
_CT = {"I": u32, "i": i32, "Q": u64, "f": f32, "z": sz}


def _fields(spec):
    out = []
    for item in spec.replace("\n", "").split(";"):
        name, code = item.split()
        ctype = _CT[code[0]]
        out.append((name, ctype * int(code[1:]) if len(code) > 1 else ctype))
    return out


class _Limits(ctypes.Structure):
    _fields_ = _fields(_LIMITS)


class _Properties(ctypes.Structure):
    _fields_ = [("apiVersion", u32), ("driverVersion", u32), ("vendorID", u32), ("deviceID", u32),
                ("deviceType", u32), ("deviceName", ctypes.c_char * 256),
                ("pipelineCacheUUID", ctypes.c_uint8 * 16), ("limits", _Limits),
                ("sparseProperties", u32 * 5)]


class _SubgroupProperties(ctypes.Structure):
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("subgroupSize", u32),
                ("supportedStages", u32), ("supportedOperations", u32), ("quadOperations", u32)]


class _DriverProperties(ctypes.Structure):
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("driverID", u32),
                ("driverName", ctypes.c_char * 256), ("driverInfo", ctypes.c_char * 256),
                ("conformanceVersion", ctypes.c_uint8 * 4)]


class _IDProperties(ctypes.Structure):
    # VkPhysicalDeviceIDProperties (core in Vulkan 1.1): the UUID that CUDA's cuDeviceGetUuid
    # reports for the same NVIDIA GPU (clocks.py matches the two by it)
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("deviceUUID", ctypes.c_uint8 * 16),
                ("driverUUID", ctypes.c_uint8 * 16), ("deviceLUID", ctypes.c_uint8 * 8),
                ("deviceNodeMask", u32), ("deviceLUIDValid", u32)]


class _FloatControlsProperties(ctypes.Structure):
    # VkPhysicalDeviceFloatControlsProperties (core in Vulkan 1.2): two enums, then 15 VkBool32
    # flags for float16/32/64 each: signed-zero-inf-nan, denorm preserve, denorm flush, RTE, RTZ
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("denormBehaviorIndependence", u32),
                ("roundingModeIndependence", u32), ("flags", u32 * 15)]


class _FeatureBits(ctypes.Structure):
    # a features struct of vkGetPhysicalDeviceFeatures2's chain: sType, pNext, then VkBool32
    # flags (up to 7; a struct reads only its own)
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("bits", u32 * 7)]


class _Features2(ctypes.Structure):
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("features", u32 * 55)]


class _CooperativeMatrixProperties(ctypes.Structure):
    # VkCooperativeMatrixPropertiesKHR
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("MSize", u32), ("NSize", u32),
                ("KSize", u32), ("AType", u32), ("BType", u32), ("CType", u32),
                ("ResultType", u32), ("saturatingAccumulation", u32), ("scope", u32)]


class _ExtensionProperties(ctypes.Structure):
    _fields_ = [("extensionName", ctypes.c_char * 256), ("specVersion", u32)]


class _Properties2(ctypes.Structure):
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("properties", _Properties)]


class _MemoryProperties(ctypes.Structure):
    _fields_ = [("memoryTypeCount", u32), ("memoryTypes", u32 * 64), ("memoryHeapCount", u32),
                ("memoryHeaps", (u64 * 2) * 16)]


class _QueueFamilyProperties(ctypes.Structure):
    _fields_ = [("queueFlags", u32), ("queueCount", u32), ("timestampValidBits", u32),
                ("minImageTransferGranularity", u32 * 3)]


class _AppInfo(ctypes.Structure):
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("pApplicationName", ctypes.c_char_p),
                ("applicationVersion", u32), ("pEngineName", ctypes.c_char_p),
                ("engineVersion", u32), ("apiVersion", u32)]


class _InstanceInfo(ctypes.Structure):
    _fields_ = [("sType", u32), ("pNext", ctypes.c_void_p), ("flags", u32),
                ("pApplicationInfo", ctypes.POINTER(_AppInfo)), ("enabledLayerCount", u32),
                ("ppEnabledLayerNames", ctypes.c_void_p), ("enabledExtensionCount", u32),
                ("ppEnabledExtensionNames", ctypes.c_void_p)]


_TYPES = {0: "other", 1: "integrated", 2: "discrete", 3: "virtual", 4: "cpu"}
_VENDORS = {0x1002: "AMD", 0x1010: "ImgTec", 0x10DE: "NVIDIA", 0x13B5: "ARM", 0x5143: "Qualcomm",
            0x8086: "Intel", 0x106B: "Apple", 0x10005: "Mesa", 0x1AE0: "Google"}
_FEATURE_FLOAT64 = 39   # index of shaderFloat64 in VkPhysicalDeviceFeatures (55 VkBool32)
_FEATURE_INT64 = 40     # shaderInt64, the next one
_FEATURE_INT16 = 41     # shaderInt16, the next one
# the features structs kp's Manager enables as the device has them (patch 0031), by sType:
# VkPhysicalDevice16BitStorageFeatures (core 1.1), VkPhysicalDevice8BitStorageFeatures and
# VkPhysicalDeviceShaderFloat16Int8Features (core 1.2; kp's 1.1 instance enables them through
# VK_KHR_8bit_storage / VK_KHR_shader_float16_int8), then three extensions' structs
_STORAGE16, _STORAGE8, _FLOAT16_INT8 = 1000083000, 1000177000, 1000082000
_COOPERATIVE_MATRIX, _BFLOAT16, _COOPERATIVE_MATRIX2 = 1000506000, 1000141000, 1000593000
STORAGE8_EXTENSION = "VK_KHR_8bit_storage"
FLOAT16_INT8_EXTENSION = "VK_KHR_shader_float16_int8"
COOPERATIVE_MATRIX_EXTENSION = "VK_KHR_cooperative_matrix"
BFLOAT16_EXTENSION = "VK_KHR_shader_bfloat16"
COOPERATIVE_MATRIX2_EXTENSION = "VK_NV_cooperative_matrix2"
# VkComponentTypeKHR and VkScopeKHR values, as names
COMPONENT_TYPES = {0: "float16", 1: "float32", 2: "float64", 3: "int8", 4: "int16", 5: "int32",
                   6: "int64", 7: "uint8", 8: "uint16", 9: "uint32", 10: "uint64",
                   1000141000: "bfloat16", 1000491000: "int8_packed", 1000491001: "uint8_packed",
                   1000491002: "float8_e4m3", 1000491003: "float8_e5m2"}
_SCOPES = {1: "device", 2: "workgroup", 3: "subgroup", 5: "queue_family"}
# VkShaderFloatControlsIndependence: which bit widths may choose their denormal mode apart
_INDEPENDENCE = {0: "32-bit only", 1: "all", 2: "none"}
FLOAT_CONTROLS_EXTENSION = "VK_KHR_shader_float_controls"
# host memory imported as a buffer: transfers copy between numpy's pages and the device with no
# staging
HOST_IMPORT_EXTENSION = "VK_EXT_external_memory_host"
# the apiVersion kp's instance asks for (KOMPUTE_VK_API_VERSION: 1.1): a core 1.2 feature is
# used through its extension under it
_KP_INSTANCE_API = (1 << 22) | (1 << 12)
_MEMORY_HEAP_DEVICE_LOCAL = 1
_HOST_WRITABLE_DEVICE = 7     # VK_MEMORY_PROPERTY_DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT
QUEUE_GRAPHICS, QUEUE_COMPUTE, QUEUE_TRANSFER = 1, 2, 4      # VkQueueFlagBits


def _queue_families(lib, phys):
    """(queueFlags, queueCount, timestampValidBits) of each queue family, in the driver's order."""
    count = u32(0)
    lib.vkGetPhysicalDeviceQueueFamilyProperties(ctypes.c_void_p(phys), ctypes.byref(count), None)
    props = (_QueueFamilyProperties * count.value)()
    lib.vkGetPhysicalDeviceQueueFamilyProperties(ctypes.c_void_p(phys), ctypes.byref(count), props)
    return tuple((int(f.queueFlags), int(f.queueCount), int(f.timestampValidBits))
                 for f in props[:count.value])


def offers_compute(family):
    """Whether a queue family ((flags, count, timestamp bits)) has compute queues."""
    flags, count, _ = family
    return bool(flags & QUEUE_COMPUTE) and count > 0


def compute_queue_family(families, timestamps=True):
    """The queue family kompute_ml submits to, of ``families`` ((flags, count, timestamp bits)
    each): a compute family without graphics (a GPU's compute engines: a dispatch's round trip is
    shorter there than on the graphics-and-compute family kp picks; decision 0020) with
    timestamps where the device has them, else the first compute family (kp's own choice); None
    without one."""
    compute = [i for i, family in enumerate(families) if offers_compute(family)]
    for i in compute:
        flags, _, bits = families[i]
        if not flags & QUEUE_GRAPHICS and (bits > 0 or not timestamps):
            return i
    return compute[0] if compute else None


def _version(v):
    return f"{v >> 22}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


class VulkanUnavailable(Exception):
    """No usable Vulkan loader or driver; the message says which step failed."""


def _bundled_loader():
    """The Vulkan loader the wheel bundles (auditwheel puts it in kompute_ml.libs/, beside the
    package, and links kompute_ml._kp to it), or None in a build without one."""
    libs = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "kompute_ml.libs")
    try:
        found = sorted(n for n in os.listdir(libs) if n.startswith("libvulkan"))
    except OSError:
        return None
    return os.path.join(libs, found[0]) if found else None


def _load_loader():
    chosen = _config.get("vulkan_library")
    # the bundled loader first: kp's (kompute_ml._kp is linked to it), so that enumeration
    # and kp see the same drivers; it needs no loader package on the machine. find_library
    # last but one and only if reached: on Linux it runs ldconfig (and the C compiler) in
    # subprocesses, where libvulkan.so.1 is what dlopen finds anyway
    names = [chosen, _bundled_loader(), "libvulkan.so.1",
             lambda: ctypes.util.find_library("vulkan"),
             "libvulkan.dylib", "vulkan-1.dll"]
    errors = []
    for name in names:
        if callable(name):
            name = name()
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            errors.append(str(exc))
            continue
        if not hasattr(lib, "vkCreateInstance"):
            # a library that loads but is not a loader (KOMPUTE_ML_VULKAN_LIBRARY=libc.so.6)
            what = f"KOMPUTE_ML_VULKAN_LIBRARY={name!r}" if name == chosen else repr(name)
            raise VulkanUnavailable(f"{what} is not a Vulkan loader (it has no vkCreateInstance)")
        return lib
    raise VulkanUnavailable("the Vulkan loader (libvulkan) could not be loaded: " + "; ".join(errors))


# The enumeration's instance, kept until a device is opened (release_enumeration): while an
# instance is alive the loader keeps the drivers' libraries loaded, so kp's own instance does
# not load them again (about half of kp's Manager creation; decision 0020). (lib, instance, pid)
# or None.
_kept = None
_kept_lock = threading.Lock()


def release_enumeration():
    """Destroy the instance :func:`enumerate_devices` kept (once a device is open, or at exit);
    in a forked child the parent's handle is only forgotten."""
    global _kept
    with _kept_lock:
        kept, _kept = _kept, None
    if kept is not None and kept[2] == os.getpid():
        kept[0].vkDestroyInstance(kept[1], None)


atexit.register(release_enumeration)


def enumerate_devices():
    """Return one dict per physical device, in the loader's order (the order kp.Manager(i) uses).

    The instance stays alive until :func:`release_enumeration` (the device layer calls it once a
    device's manager is made), so the drivers stay loaded for that manager."""
    global _kept
    lib = _load_loader()
    app = _AppInfo(0, None, b"kompute_ml", 1, b"kompute_ml", 1, (1 << 22) | (1 << 12))
    info = _InstanceInfo(1, None, 0, ctypes.pointer(app), 0, None, 0, None)
    inst = ctypes.c_void_p()
    lib.vkCreateInstance.restype = i32
    res = lib.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(inst))
    if res != 0:
        raise VulkanUnavailable(f"vkCreateInstance failed with VkResult {res} "
                                "(no Vulkan driver installed, or VK_ICD_FILENAMES points at none)")
    try:
        count = u32(0)
        lib.vkEnumeratePhysicalDevices.restype = i32
        res = lib.vkEnumeratePhysicalDevices(inst, ctypes.byref(count), None)
        if res != 0 or count.value == 0:
            raise VulkanUnavailable(f"the Vulkan loader found no physical device (VkResult {res})")
        handles = (ctypes.c_void_p * count.value)()
        lib.vkEnumeratePhysicalDevices(inst, ctypes.byref(count), handles)
        out = [_describe(lib, inst, handles[i], i) for i in range(count.value)]
    except BaseException:
        lib.vkDestroyInstance(inst, None)
        raise
    release_enumeration()                  # (an earlier enumeration's, if any)
    with _kept_lock:
        _kept = (lib, inst, os.getpid())
    return out


def _extensions(lib, phys):
    """Names of the device extensions the physical device offers (an empty set on failure)."""
    count = u32(0)
    lib.vkEnumerateDeviceExtensionProperties.restype = i32
    if lib.vkEnumerateDeviceExtensionProperties(ctypes.c_void_p(phys), None, ctypes.byref(count),
                                                None) != 0 or not count.value:
        return set()
    props = (_ExtensionProperties * count.value)()
    if lib.vkEnumerateDeviceExtensionProperties(ctypes.c_void_p(phys), None, ctypes.byref(count),
                                                props) not in (0, 5):    # 5: VK_INCOMPLETE
        return set()
    return {props[i].extensionName.decode(errors="replace") for i in range(count.value)}


def denorm_preserve_widths(limits):
    """The float widths whose ``DenormPreserve`` execution mode kompute_ml's kernels request on a
    device (its ``limits``): (32,) where the device offers it for float32 and its
    denormBehaviorIndependence lets float32 choose alone; (16, 32, 64) where every width must
    choose alike and all three can preserve; () elsewhere (kernels keep the driver's default).
    The mode needs Vulkan 1.2 or VK_KHR_shader_float_controls enabled: kp makes a Vulkan 1.1
    instance, so the extension must be on offer (the device is then created with it)."""
    if not (limits.get("denorm_preserve_float32") and limits.get("float_controls_extension")):
        return ()
    if limits.get("denorm_independence") in ("32-bit only", "all"):
        return (32,)
    if limits.get("denorm_preserve_float16") and limits.get("denorm_preserve_float64"):
        return (16, 32, 64)
    return ()


def signed_zero_widths(limits):
    """The float widths (32, 64) whose ``SignedZeroInfNanPreserve`` mode kompute_ml's kernels
    request on a device (its ``limits``): where it offers the mode
    (``shaderSignedZeroInfNanPreserveFloat32/64``) and the float-controls extension. Without the
    mode a driver may treat -0 as +0 and assume no NaN or infinity (NVIDIA's gave ``-x`` of a
    NaN without its sign bit and ``floor_divide(0, 5)`` as -0); numpy keeps both."""
    if not limits.get("float_controls_extension"):
        return ()
    return tuple(w for w in (32, 64) if limits.get(f"signed_zero_inf_nan_float{w}")
                 and (w == 32 or limits.get("float64")))


def _small_type_features(lib, inst, phys, api, extensions, features):
    """The 8/16-bit and matrix features of a device, as kp's Manager enables them (patch 0031:
    the same structs, chained where the device may report them): a dict of bools, and
    ``cooperative_matrix_properties``: what vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR
    lists, a tuple of dicts (m, n, k, a, b, c, result component types by name, saturating,
    scope)."""
    out = {"int16": bool(features[_FEATURE_INT16]), "int8": False, "float16": False,
           "storage16": False, "storage16_uniform": False, "storage8": False,
           "storage8_uniform": False, "bfloat16": False, "bfloat16_dot_product": False,
           "bfloat16_cooperative_matrix": False, "cooperative_matrix": False,
           "cooperative_matrix2": (), "cooperative_matrix_properties": ()}
    if (api >> 12) < ((1 << 10) | 1):        # vkGetPhysicalDeviceFeatures2 is core in 1.1
        return out
    core12 = (api >> 12) >= ((1 << 10) | 2) and _KP_INSTANCE_API >= (1 << 22) | (2 << 12)
    wanted = [_STORAGE16]
    if core12 or STORAGE8_EXTENSION in extensions:
        wanted.append(_STORAGE8)
    if core12 or FLOAT16_INT8_EXTENSION in extensions:
        wanted.append(_FLOAT16_INT8)
    coop = COOPERATIVE_MATRIX_EXTENSION in extensions
    if coop:
        wanted.append(_COOPERATIVE_MATRIX)
    if BFLOAT16_EXTENSION in extensions:
        wanted.append(_BFLOAT16)
    if coop and COOPERATIVE_MATRIX2_EXTENSION in extensions:
        wanted.append(_COOPERATIVE_MATRIX2)
    structs = {s: _FeatureBits(s, None) for s in wanted}
    chain = [structs[s] for s in wanted]
    for a, b in zip(chain, chain[1:]):
        a.pNext = ctypes.cast(ctypes.pointer(b), ctypes.c_void_p)
    query = _Features2(1000059000, ctypes.cast(ctypes.pointer(chain[0]), ctypes.c_void_p))
    lib.vkGetPhysicalDeviceFeatures2(ctypes.c_void_p(phys), ctypes.byref(query))

    def bit(stype, i):
        return stype in structs and bool(structs[stype].bits[i])
    out.update(storage16=bit(_STORAGE16, 0), storage16_uniform=bit(_STORAGE16, 1),
               storage8=bit(_STORAGE8, 0), storage8_uniform=bit(_STORAGE8, 1),
               float16=bit(_FLOAT16_INT8, 0), int8=bit(_FLOAT16_INT8, 1),
               bfloat16=bit(_BFLOAT16, 0), bfloat16_dot_product=bit(_BFLOAT16, 1),
               bfloat16_cooperative_matrix=bit(_BFLOAT16, 2),
               cooperative_matrix=bit(_COOPERATIVE_MATRIX, 0))
    if out["cooperative_matrix"] and _COOPERATIVE_MATRIX2 in structs:
        names = ("workgroup_scope", "flexible_dimensions", "reductions", "conversions",
                 "per_element_operations", "tensor_addressing", "block_loads")
        out["cooperative_matrix2"] = tuple(n for i, n in enumerate(names)
                                           if structs[_COOPERATIVE_MATRIX2].bits[i])
    if out["cooperative_matrix"]:
        out["cooperative_matrix_properties"] = _cooperative_matrix_properties(lib, inst, phys)
    return out


def _cooperative_matrix_properties(lib, inst, phys):
    lib.vkGetInstanceProcAddr.restype = ctypes.c_void_p
    lib.vkGetInstanceProcAddr.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    addr = lib.vkGetInstanceProcAddr(inst, b"vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")
    if not addr:
        return ()
    fn = ctypes.CFUNCTYPE(i32, ctypes.c_void_p, ctypes.POINTER(u32),
                          ctypes.POINTER(_CooperativeMatrixProperties))(addr)
    count = u32(0)
    if fn(phys, ctypes.byref(count), None) != 0 or not count.value:
        return ()
    props = (_CooperativeMatrixProperties * count.value)()
    for p in props:
        p.sType = 1000506001
    if fn(phys, ctypes.byref(count), props) not in (0, 5):        # 5: VK_INCOMPLETE
        return ()

    def component(t):
        return COMPONENT_TYPES.get(int(t), int(t))
    return tuple({"m": int(p.MSize), "n": int(p.NSize), "k": int(p.KSize),
                  "a": component(p.AType), "b": component(p.BType), "c": component(p.CType),
                  "result": component(p.ResultType),
                  "saturating": bool(p.saturatingAccumulation),
                  "scope": _SCOPES.get(int(p.scope), int(p.scope))}
                 for p in props[:count.value])


def _describe(lib, inst, phys, index):
    props = _Properties()
    lib.vkGetPhysicalDeviceProperties(ctypes.c_void_p(phys), ctypes.byref(props))
    subgroup = _SubgroupProperties(1000094000, None)
    driver = _DriverProperties(1000196000, None)
    floats = _FloatControlsProperties(1000197000, None)
    ids = _IDProperties(1000071004, None)
    api = props.apiVersion
    if (api >> 12) >= ((1 << 10) | 2):  # driver and float-controls properties are core in 1.2
        ids.pNext = ctypes.cast(ctypes.pointer(driver), ctypes.c_void_p)
        driver.pNext = ctypes.cast(ctypes.pointer(floats), ctypes.c_void_p)
    if (api >> 12) >= ((1 << 10) | 1):  # subgroup and ID properties are core in 1.1
        subgroup.pNext = ctypes.cast(ctypes.pointer(ids), ctypes.c_void_p)
        props2 = _Properties2(1000059001, ctypes.cast(ctypes.pointer(subgroup), ctypes.c_void_p))
        lib.vkGetPhysicalDeviceProperties2(ctypes.c_void_p(phys), ctypes.byref(props2))
    features = (u32 * 55)()
    lib.vkGetPhysicalDeviceFeatures(ctypes.c_void_p(phys), ctypes.byref(features))
    mem = _MemoryProperties()
    lib.vkGetPhysicalDeviceMemoryProperties(ctypes.c_void_p(phys), ctypes.byref(mem))
    device_local = sum(int(mem.memoryHeaps[h][0]) for h in range(mem.memoryHeapCount)
                       if mem.memoryHeaps[h][1] & _MEMORY_HEAP_DEVICE_LOCAL)
    # heaps the host can write straight into device memory through (a device-local,
    # host-visible, host-coherent type: a discrete GPU's BAR; all of a CPU driver's memory)
    writable = {int(mem.memoryTypes[2 * t + 1]) for t in range(mem.memoryTypeCount)
                if int(mem.memoryTypes[2 * t]) & _HOST_WRITABLE_DEVICE == _HOST_WRITABLE_DEVICE}
    lim = props.limits
    name = props.deviceName.decode(errors="replace")
    extensions = _extensions(lib, phys)
    families = _queue_families(lib, phys)
    float_controls = (api >> 12) >= ((1 << 10) | 2) and FLOAT_CONTROLS_EXTENSION in extensions
    driver_name = driver.driverName.decode(errors="replace")
    driver_info = driver.driverInfo.decode(errors="replace")
    limits = {
        "max_workgroup_size": tuple(lim.maxComputeWorkGroupSize),
        "max_workgroup_invocations": int(lim.maxComputeWorkGroupInvocations),
        "max_workgroup_count": tuple(lim.maxComputeWorkGroupCount),
        "max_storage_buffer_range": int(lim.maxStorageBufferRange),
        "min_storage_buffer_offset_alignment": int(lim.minStorageBufferOffsetAlignment),
        "max_shared_memory": int(lim.maxComputeSharedMemorySize),
        "max_push_constants_size": int(lim.maxPushConstantsSize),
        "max_storage_buffers_per_stage": int(lim.maxPerStageDescriptorStorageBuffers),
        "subgroup_size": int(subgroup.subgroupSize) or None,
        "subgroup_operations": int(subgroup.supportedOperations),
        "float64": bool(features[_FEATURE_FLOAT64]),
        "int64": bool(features[_FEATURE_INT64]),
        "timestamp_period_ns": float(lim.timestampPeriod),
        "device_local_memory": device_local,
        "host_writable_device_memory": sum(int(mem.memoryHeaps[h][0]) for h in writable),
        # VkPhysicalDeviceFloatControlsProperties (all False / None before Vulkan 1.2): what a
        # shader *may ask* for (SPIR-V's DenormPreserve / DenormFlushToZero modes), not what the
        # driver does by default
        "signed_zero_inf_nan_float32": bool(floats.flags[1]),
        "signed_zero_inf_nan_float64": bool(floats.flags[2]),
        "denorm_preserve_float16": bool(floats.flags[3]),
        "denorm_preserve_float32": bool(floats.flags[4]),
        "denorm_preserve_float64": bool(floats.flags[5]),
        "denorm_flush_float32": bool(floats.flags[7]),
        "denorm_independence": _INDEPENDENCE.get(floats.denormBehaviorIndependence)
        if float_controls else None,
        "float_controls_extension": bool(float_controls),
        "host_import_extension": HOST_IMPORT_EXTENSION in extensions,
        "queue_families": families,
        "compute_queue_family": compute_queue_family(families, lim.timestampPeriod > 0),
        # the device's UUID as 32 hex digits (None before Vulkan 1.1 or where it is all zero)
        "device_uuid": bytes(ids.deviceUUID).hex() if any(ids.deviceUUID) else None,
    }
    # int16, int8, float16, storage16(_uniform), storage8(_uniform), bfloat16(...),
    # cooperative_matrix, cooperative_matrix2 (the names of its bits), and
    # cooperative_matrix_properties: what kp's Manager enables (patch 0031)
    limits.update(_small_type_features(lib, inst, phys, api, extensions, features))
    # the rule kompute_ml's kernels follow on this device: "preserve" (they request
    # DenormPreserve, so float32 subnormals are kept) or "driver" (the driver's default, which
    # may flush them to zero)
    limits["float32_denormals"] = "preserve" if denorm_preserve_widths(limits) else "driver"
    return {
        "index": index,
        "name": name,
        "vendor": _VENDORS.get(props.vendorID, hex(props.vendorID)),
        "type": _TYPES.get(props.deviceType, "other"),
        "driver": " ".join(x for x in (driver_name, driver_info) if x) or _version(props.driverVersion),
        "api_version": _version(api),
        "limits": limits,
    }
