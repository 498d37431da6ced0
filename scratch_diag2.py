import time, numpy as np, statistics as S, concurrent.futures as cf
import kompute_ml as km
from kompute_ml._runtime import staging as st, kp as K, memory as M, stream as SM
dev = km.get_device(); dev.manager
N = 4 << 20
h = np.random.default_rng(0).random(N // 4, dtype=np.float32)
def med(fn, r=40):
    fn(); fn(); ts = []
    for _ in range(r):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return "%.1f us" % (S.median(ts) * 1e6)
print("km.asarray(h)+sync:", med(lambda: (km.asarray(h), km.synchronize())))
buf = M.alloc(dev, N)
print("stream.upload(buf, h):", med(lambda: SM.upload(buf, h)))
def direct_staging():
    with dev.lock:
        st.upload(dev, buf.tensor, h)
print("staging.upload:", med(direct_staging))
slots = st._rings.get(dev).get(); slot = slots[0]
view = slot.mapped[:N].view(np.float32)
pool = st._pool()
def phases():
    t0 = time.perf_counter()
    st._parallel(slot, st._copy, view.reshape(-1, 1), h.reshape(-1, 1))
    t1 = time.perf_counter()
    slot.wait_host()
    t2 = time.perf_counter()
    slot.submit(dev, slot.tensor, buf.tensor, 0, 0, N)
    t3 = time.perf_counter()
    slot.wait_device(dev)
    t4 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, t4 - t3
with dev.lock:
    rs = [phases() for _ in range(40)]
print("phases (dispatch copies, wait copies, record+submit, wait DMA) us:", [round(S.median(x) * 1e6, 1) for x in zip(*rs)])
with dev.lock:
    def inline_copy():
        np.copyto(view, h)
    print("inline copy 1 thread:", med(inline_copy))
    def copy4():
        step = N // 4 // 4
        fs = [pool.submit(np.copyto, view[i:i + step], h[i:i + step]) for i in range(0, N // 4, step)]
        cf.wait(fs)
    print("pool copy 4 threads:", med(copy4))
print("km.synchronize() empty:", med(lambda: km.synchronize()))
print("M.alloc+release 4MiB:", med(lambda: M.alloc(dev, N).release()))
