"""Custom kernels: a GLSL file from your own shaders/ folder, a 2-D kernel with defines, and a
kernel written in Python with python2shader. Each result is checked against numpy.

Run from the repository root:  python examples/custom_kernel.py
"""

import os

import numpy as np

import kompute_ml as km
from kompute_ml.pyshader import Array, f32, i32, ivec3, python2shader

HERE = os.path.dirname(os.path.abspath(__file__))
# a user's shader folder: kernels in it are found by name (here, the repository's examples)
os.environ.setdefault("KOMPUTE_ML_SHADER_PATH",
                      os.path.join(HERE, os.pardir, "shaders", "examples"))


def saxpy():
    """y = a * x + y with shaders/examples/saxpy.comp (which #includes common.glsl)."""
    kernel = km.Kernel.from_glsl("saxpy.comp")      # found on KOMPUTE_ML_SHADER_PATH
    n = 1_000_000
    rng = np.random.default_rng(0)
    x_host = rng.standard_normal(n, dtype=np.float32)
    y_host = rng.standard_normal(n, dtype=np.float32)
    x, y = km.asarray(x_host), km.asarray(y_host)
    # bindings 0: x, 1: y; push constants (uint n, float a); grid counts invocations
    kernel(x, y, grid=n, push=(n, 2.0))
    np.testing.assert_allclose(y.numpy(), 2.0 * x_host + y_host, rtol=1e-6)
    print(f"saxpy: {kernel} -> ok")


def mandelbrot(width=96, height=48, max_iter=60):
    """A 2-D grid and a compile-time define."""
    kernel = km.Kernel.from_glsl("mandelbrot", defines={"MAX_ITER": max_iter})
    counts = km.zeros(width * height, dtype="uint32")
    x0, y0, step = -2.2, -1.2, 2.4 / height
    kernel(counts, grid=(width, height), push=(width, height, x0, y0, step))
    img = counts.numpy().reshape(height, width)
    # the same iteration in numpy
    c = (np.float32(x0) + np.arange(width, dtype=np.float32) * np.float32(step))[None, :] + \
        1j * (np.float32(y0) + np.arange(height, dtype=np.float32) * np.float32(step))[:, None]
    z, want = np.zeros_like(c), np.zeros(c.shape, np.uint32)
    for _ in range(max_iter):
        alive = np.abs(z) <= 2.0
        z[alive] = z[alive] ** 2 + c[alive]
        want += alive
    agree = np.mean(img == want)
    print(f"mandelbrot: {agree:.1%} of the pixels agree with numpy (float32 rounding "
          "differs at the set's edge)")
    for row in img[::4]:
        print("".join(" .:-=+*#%@"[min(9, int(v) * 10 // (max_iter + 1))] for v in row[::2]))


@python2shader(local_size=(256, 1, 1))
def softplus(index=("input", "GlobalInvocationId", ivec3),
             x=("buffer", 0, Array(f32)),
             out=("buffer", 1, Array(f32)),
             n=("push_constant", 0, i32),
             beta=("push_constant", 1, f32)):
    i = index.x
    if i >= n:              # groups of 256: guard the tail
        return
    v = x[i] * beta
    # a numerically stable softplus: log(1 + exp(v)) / beta
    if v > 20.0:
        out[i] = x[i]
    else:
        out[i] = log(1.0 + exp(v)) / beta          # noqa: F821 - pyshader's bare builtins


def python_kernel():
    """A kernel written in Python: python2shader translates it to GLSL, then SPIR-V."""
    print(softplus.to_glsl())
    x_host = np.linspace(-30, 30, 1001, dtype=np.float32)
    x, out = km.asarray(x_host), km.empty(x_host.shape)
    softplus.to_kernel()(x, out, grid=x.size, push=(x.size, 1.5))
    want = np.where(x_host * 1.5 > 20, x_host, np.log1p(np.exp(1.5 * x_host)) / 1.5)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    print("softplus (python2shader): ok")


if __name__ == "__main__":
    print("device:", km.get_device())
    saxpy()
    mandelbrot()
    python_kernel()
