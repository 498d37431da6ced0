import time, numpy as np, statistics as S
import kompute_ml as km
from kompute_ml._runtime import staging as st, kp as K, memory as M, stream as SM
dev = km.get_device(); dev.manager
N = 4 << 20
src = np.random.default_rng(0).random(N // 4, dtype=np.float32)
dst = np.empty_like(src); dst[:] = 1
def med(fn, r=30):
    fn(); ts = []
    for _ in range(r):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return S.median(ts) * 1e6
print("numpy->numpy warm 4MiB: %.1f us" % med(lambda: np.copyto(dst, src)))
with dev.lock:
    ring = st._rings.get(dev); slots = ring.get(); slot = slots[0]
    view = slot.mapped[:N].view(np.float32)
    print("numpy->slot 4MiB 1 thread: %.1f us" % med(lambda: np.copyto(view, src)))
    print("slot->numpy 4MiB 1 thread: %.1f us" % med(lambda: np.copyto(dst, view)))
    buf = M.alloc(dev, N)
    def dma():
        slot.submit(dev, slot.tensor, buf.tensor, 0, 0, N); slot.wait_device(dev)
    print("DMA slot->storage 4MiB submit+wait: %.1f us" % med(dma))
    def dma_down():
        slot.submit(dev, buf.tensor, slot.tensor, 0, 0, N); slot.wait_device(dev)
    print("DMA storage->slot 4MiB submit+wait: %.1f us" % med(dma_down))
    def imp():
        op = K.op_host_copy(dev.manager, src.ctypes.data, N, buf.tensor, 0, True); del op
    print("import+release 4MiB: %.1f us" % med(imp))
    seq = K.sequence_create(dev.manager, dev.name)
    def imp_copy():
        op = K.op_host_copy(dev.manager, src.ctypes.data, N, buf.tensor, 0, True)
        K.sequence_record(seq, op); K.sequence_submit(seq); K.sequence_wait(seq); K.sequence_clear(seq)
    print("import+copy+wait 4MiB: %.1f us" % med(imp_copy))
    op = K.op_host_copy(dev.manager, src.ctypes.data, N, buf.tensor, 0, True)
    def reuse():
        K.sequence_record(seq, op); K.sequence_submit(seq); K.sequence_wait(seq); K.sequence_clear(seq)
    print("copy from an already imported 4MiB: %.1f us" % med(reuse))
    big = np.random.default_rng(0).random((64 << 20) // 4, dtype=np.float32)
    bb = M.alloc(dev, 64 << 20)
    op2 = K.op_host_copy(dev.manager, big.ctypes.data, 64 << 20, bb.tensor, 0, True)
    def reuse2():
        K.sequence_record(seq, op2); K.sequence_submit(seq); K.sequence_wait(seq); K.sequence_clear(seq)
    t = med(reuse2, 10); print("copy from imported 64MiB: %.1f us (%.1f GB/s)" % (t, (64 << 20) / t / 1e3))
    v2 = slots[1].mapped
    def slotdma64():
        for k in range(4):
            slot.submit(dev, slot.tensor, bb.tensor, 0, k * (16 << 20), 16 << 20); slot.wait_device(dev)
    t = med(slotdma64, 10); print("DMA slot->storage 4x16MiB: %.1f us (%.1f GB/s)" % (t, (64 << 20) / t / 1e3))
    import concurrent.futures as cf
    pool = st._pool()
    for parts in (1, 2, 4, 8):
        step = N // 4 // parts
        def par():
            fs = [pool.submit(np.copyto, view[i:i + step], src[i:i + step]) for i in range(0, N // 4, step)]
            cf.wait(fs)
        print("numpy->slot 4MiB %d threads: %.1f us" % (parts, med(par)))
        def parn():
            fs = [pool.submit(np.copyto, dst[i:i + step], src[i:i + step]) for i in range(0, N // 4, step)]
            cf.wait(fs)
        print("numpy->numpy 4MiB %d threads: %.1f us" % (parts, med(parn)))
