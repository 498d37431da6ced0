"""Logistic regression as in Kompute's pyshader article, on Python 3.11+ with kompute_ml.

The shader below is the article's, unchanged but for the import: pyshader translated Python
bytecode and no longer runs on current Pythons; ``kompute_ml.pyshader`` offers the same API.
It runs first through ``kp`` directly (the article's loop), then through ``km.Kernel`` on
kompute_ml arrays.

Run:  python examples/pyshader_logistic.py
"""

import numpy as np

import kompute_ml as km
from kompute_ml.pyshader import Array, f32, ivec3, python2shader, vec2   # was: from pyshader


@python2shader
def compute_shader(index=("input", "GlobalInvocationId", ivec3),
                   x_i=("buffer", 0, Array(f32)),
                   x_j=("buffer", 1, Array(f32)),
                   y=("buffer", 2, Array(f32)),
                   w_in=("buffer", 3, Array(f32)),
                   w_out_i=("buffer", 4, Array(f32)),
                   w_out_j=("buffer", 5, Array(f32)),
                   b_in=("buffer", 6, Array(f32)),
                   b_out=("buffer", 7, Array(f32)),
                   l_out=("buffer", 8, Array(f32)),
                   M=("buffer", 9, Array(f32))):
    i = index.x
    m = M[0]
    w_curr = vec2(w_in[0], w_in[1])
    b_curr = b_in[0]
    x_curr = vec2(x_i[i], x_j[i])
    y_curr = y[i]
    z_dot = w_curr @ x_curr
    z = z_dot + b_curr
    y_hat = 1.0 / (1.0 + exp(-z))                                         # noqa: F821
    d_z = y_hat - y_curr
    d_w = (1.0 / m) * x_curr * d_z
    d_b = (1.0 / m) * d_z
    loss = -((y_curr * log(y_hat)) + ((1.0 + y_curr) * log(1.0 - y_hat)))  # noqa: F821
    w_out_i[i] = d_w.x
    w_out_j[i] = d_w.y
    b_out[i] = d_b
    l_out[i] = loss


X_I = np.array([0, 1, 1, 1, 1], np.float32)
X_J = np.array([0, 0, 0, 1, 1], np.float32)
Y = np.array([0, 0, 0, 1, 1], np.float32)
ITERATIONS, LEARNING_RATE = 100, 0.1


def kp_program(mgr):
    """The article's kp objects on ``mgr``: (the sequence one iteration evaluates, w_in, b_in,
    (w_out_i, w_out_j, b_out, l_out)); the data is on the device already."""
    from kompute_ml import _kp as kp   # kp 0.9.0 as built into kompute_ml
    x_i, x_j, y = mgr.tensor(X_I), mgr.tensor(X_J), mgr.tensor(Y)
    w_in = mgr.tensor(np.array([0.001, 0.001], np.float32))
    b_in = mgr.tensor(np.array([0.0], np.float32))
    w_out_i, w_out_j, b_out, l_out = (mgr.tensor(np.zeros(5, np.float32)) for _ in range(4))
    m = mgr.tensor(np.array([len(Y)], np.float32))
    params = [x_i, x_j, y, w_in, w_out_i, w_out_j, b_in, b_out, l_out, m]
    mgr.sequence().record(kp.OpTensorSyncDevice(params)).eval()
    # kp's default dispatch: one workgroup (of 1, pyshader's size) per element of x_i
    algo = mgr.algorithm(params, compute_shader.to_spirv())
    seq = (mgr.sequence()
           .record(kp.OpTensorSyncDevice([w_in, b_in]))
           .record(kp.OpAlgoDispatch(algo))
           .record(kp.OpTensorSyncLocal([w_out_i, w_out_j, b_out, l_out])))
    return seq, w_in, b_in, (w_out_i, w_out_j, b_out, l_out)


def with_kp(mgr=None):
    """The article's loop: kp tensors, one algorithm, one sequence evaluated per iteration (on
    ``mgr``, or on a kp.Manager of its own)."""
    from kompute_ml import _kp as kp   # kp 0.9.0 as built into kompute_ml
    own = mgr is None
    mgr = kp.Manager() if own else mgr
    seq, w_in, b_in, (w_out_i, w_out_j, b_out, _) = kp_program(mgr)
    for _ in range(ITERATIONS):
        seq.eval()
        w_in.data()[0] -= LEARNING_RATE * w_out_i.data().sum()
        w_in.data()[1] -= LEARNING_RATE * w_out_j.data().sum()
        b_in.data()[0] -= LEARNING_RATE * b_out.data().sum()
    w, b = w_in.data().copy(), float(b_in.data()[0])
    if own:
        mgr.destroy()
    return w, b


def with_kompute_ml():
    """The same shader through km.Kernel on kompute_ml arrays."""
    kernel = km.Kernel(compute_shader)
    x_i, x_j, y = km.asarray(X_I), km.asarray(X_J), km.asarray(Y)
    m = km.asarray([float(len(Y))])
    w_out_i, w_out_j, b_out, l_out = (km.zeros(5) for _ in range(4))
    w, b = np.array([0.001, 0.001], np.float32), np.float32(0.0)
    for _ in range(ITERATIONS):
        w_in, b_in = km.asarray(w), km.asarray([b])
        kernel(x_i, x_j, y, w_in, w_out_i, w_out_j, b_in, b_out, l_out, m, grid=len(Y))
        w = w - LEARNING_RATE * np.array([w_out_i.numpy().sum(), w_out_j.numpy().sum()],
                                         np.float32)
        b = b - np.float32(LEARNING_RATE) * b_out.numpy().sum()
    return w, float(b)


def predict(w, b):
    z = w[0] * X_I + w[1] * X_J + b
    return (1 / (1 + np.exp(-z)) > 0.5).astype(int)


if __name__ == "__main__":
    for name, train in (("kp", with_kp), ("kompute_ml", with_kompute_ml)):
        w, b = train()
        print(f"{name:>10}: w = {w}, b = {b:.5f}, predictions {predict(w, b)} (labels "
              f"{Y.astype(int)})")
