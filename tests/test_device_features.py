"""The 8/16-bit and matrix features kp's Manager enables (patch 0031) and the probe reports.

Run with ``--vk-validation`` too: a shader using a feature the device was created without is a
validation error (VUID-VkShaderModuleCreateInfo-pCode-08740), so the kernels below check that the
features are enabled, not only reported.
"""

import numpy as np
import pytest

import kompute_ml as km
from kompute_ml._array import dtypes as _dtypes

_KEYS = ("int8", "int16", "float16", "storage8", "storage16", "bfloat16", "cooperative_matrix")


def _lavapipe():
    dev = km.get_device()
    if "llvmpipe" not in dev.name:
        pytest.skip("lavapipe's feature set is asserted; another device reports its own")
    return dev


def test_every_device_reports_the_small_type_features():
    for info in km.devices():
        lim = info.limits
        for key in _KEYS:
            assert isinstance(lim[key], bool), key
        assert isinstance(lim["cooperative_matrix2"], tuple)
        props = lim["cooperative_matrix_properties"]
        assert isinstance(props, tuple)
        assert bool(props) <= lim["cooperative_matrix"]      # listed only with the feature
        for p in props:
            assert set(p) == {"m", "n", "k", "a", "b", "c", "result", "saturating", "scope"}
            assert min(p["m"], p["n"], p["k"]) >= 1
        assert not lim["cooperative_matrix2"] or lim["cooperative_matrix"]


def test_lavapipe_has_the_8_and_16_bit_features_and_no_matrix_ones():
    dev = _lavapipe()
    feats = _dtypes.shader_features(dev)
    for key in ("int8", "int16", "float16", "storage8", "storage16"):
        assert feats[key] is True, key
    assert feats["bfloat16"] is False
    assert feats["cooperative_matrix"] is False
    assert feats["cooperative_matrix2"] == ()
    assert feats["cooperative_matrix_properties"] == ()


_BYTES = """
#version 450
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint8_t a[]; };
layout(std430, binding = 1) buffer B { uint8_t b[]; };
layout(std430, binding = 2) buffer C { int16_t c[]; };
layout(std430, binding = 3) buffer D { float16_t d[]; };
layout(push_constant) uniform P { uint n; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= n) return;
    uint8_t x = a[i];
    b[i] = x * uint8_t(3) + uint8_t(7);          // 8-bit arithmetic, wrapping
    c[i] = int16_t(x) * int16_t(-300);           // 16-bit arithmetic, wrapping
    d[i] = float16_t(x) * float16_t(0.5);        // float16 arithmetic
}
"""


def test_kernels_store_and_compute_in_8_and_16_bits():
    dev = km.get_device()
    feats = _dtypes.shader_features(dev)
    if not all(feats[k] for k in ("int8", "int16", "float16", "storage8", "storage16")):
        pytest.skip(f"{dev.name} lacks 8/16-bit storage or arithmetic")
    n = 1001
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, n, dtype=np.uint8)
    words = np.zeros(-(-n // 4) * 4, np.uint8)
    words[:n] = x
    a = km.asarray(words.view(np.uint32))
    b = km.zeros(-(-n // 4), dtype=km.uint32)
    c = km.zeros(-(-n // 2), dtype=km.uint32)
    d = km.zeros(-(-n // 2), dtype=km.uint32)
    kernel = km.Kernel.from_glsl(_BYTES)
    kernel(a, b, c, d, grid=n, push=(n,))
    np.testing.assert_array_equal(b.numpy().view(np.uint8)[:n], x * np.uint8(3) + np.uint8(7))
    np.testing.assert_array_equal(c.numpy().view(np.int16)[:n],
                                  x.astype(np.int16) * np.int16(-300))
    np.testing.assert_array_equal(d.numpy().view(np.float16)[:n],
                                  x.astype(np.float16) * np.float16(0.5))
