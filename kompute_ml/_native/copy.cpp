// Host copies for kompute_ml: streaming reads of mapped device memory, and copies split between
// native worker threads and the calling thread. Plain C++ (no Python): copy.hpp is the interface,
// module.cpp binds it as kompute_ml._native.
#include "copy.hpp"
#include "affinity.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <unistd.h>
#elif defined(_WIN32)
#include <process.h>
#define getpid _getpid
typedef int pid_t;
#endif
#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace kompute_ml {
namespace native {

// Reads of a GPU's device memory mapped for the host (_native.read_primary). That mapping is
// write-combining: an ordinary load waits for its own round trip over the bus, so memcpy out of
// a BAR runs at tens of MB/s. A streaming load (MOVNTDQA, SSE4.1) fetches a whole 64-byte line,
// and the lines of a batch are in flight together: about twenty times faster (decision 0013).
// Lines are read whole (a line holding any byte of the range lies in the same mapped page) into
// a bounce buffer, and the range's bytes copied out of it.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
constexpr size_t kBatchLines = 16;
typedef void (*LineLoader)(uint8_t* bounce, const uint8_t* lines, size_t count);

__attribute__((target("avx512f"))) void
loadLines512(uint8_t* bounce, const uint8_t* lines, size_t count)
{
    __m512i r[kBatchLines];
    for (size_t k = 0; k < count; k++) {
        r[k] = _mm512_stream_load_si512((void*)(lines + 64 * k));
    }
    for (size_t k = 0; k < count; k++) {
        _mm512_store_si512((void*)(bounce + 64 * k), r[k]);
    }
}

__attribute__((target("avx2"))) void
loadLines256(uint8_t* bounce, const uint8_t* lines, size_t count)
{
    __m256i r[2 * kBatchLines];
    for (size_t k = 0; k < 2 * count; k += 2) {     // the first half of every line first
        r[k] = _mm256_stream_load_si256((__m256i*)(lines + 32 * k));
    }
    for (size_t k = 1; k < 2 * count; k += 2) {
        r[k] = _mm256_stream_load_si256((__m256i*)(lines + 32 * k));
    }
    for (size_t k = 0; k < 2 * count; k++) {
        _mm256_store_si256((__m256i*)(bounce + 32 * k), r[k]);
    }
}

__attribute__((target("sse4.1"))) void
loadLines128(uint8_t* bounce, const uint8_t* lines, size_t count)
{
    __m128i r[4 * kBatchLines];
    for (size_t q = 0; q < 4; q++) {
        for (size_t k = 0; k < count; k++) {
            r[4 * k + q] = _mm_stream_load_si128((__m128i*)(lines + 64 * k + 16 * q));
        }
    }
    for (size_t k = 0; k < 4 * count; k++) {
        _mm_store_si128((__m128i*)(bounce + 16 * k), r[k]);
    }
}

LineLoader
lineLoader()
{
    static const LineLoader loader = []() -> LineLoader {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f")) {
            return loadLines512;
        }
        if (__builtin_cpu_supports("avx2")) {
            return loadLines256;
        }
        if (__builtin_cpu_supports("sse4.1")) {
            return loadLines128;
        }
        return nullptr;
    }();
    return loader;
}
#endif

void
readStreaming(uint8_t* dst, const uint8_t* src, size_t n)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    LineLoader loader = lineLoader();
    if (loader != nullptr && n > 0) {
        alignas(64) uint8_t bounce[64 * kBatchLines];
        const uintptr_t begin = (uintptr_t)src, end = begin + n;
        uintptr_t line = begin & ~(uintptr_t)63;
        const uintptr_t last = (end + 63) & ~(uintptr_t)63;
        _mm_mfence();      // no earlier load's line left in a streaming buffer is used
        while (line < last) {
            const size_t count = std::min<size_t>(kBatchLines, (last - line) / 64);
            loader(bounce, (const uint8_t*)line, count);
            const uintptr_t lo = std::max(line, begin);
            const uintptr_t hi = std::min(line + 64 * count, end);
            std::memcpy(dst + (lo - begin), bounce + (lo - line), hi - lo);
            line += 64 * count;
        }
        return;
    }
#endif
    std::memcpy(dst, src, n);
}



// Host copies split between native worker threads and, for a copy the caller waits for, the
// calling thread (_native.parallel_copy, _native.parallel_copy_start). Python's thread pool
// hands a part to a worker in tens of microseconds (the worker must take the GIL to start), so
// a copy split between Python's threads was slower than one thread's, and native threads'
// halves it (decision 0006). A
// copy is a job of fixed-size parts taken from an atomic counter; jobs queue in order, workers
// woken through a condition variable take parts of the first job with parts left, and a worker
// that wakes late finds the counters spent. Workers are made as first needed, detached, and
// forgotten by a forked child (which makes its own).
namespace {
// How long a worker that finished its parts keeps looking for new ones before it sleeps on the
// pool's condition variable (and a caller waits for a job's last parts before it sleeps). A
// sleeping worker takes 10-50 us to wake, where the parts of a small copy or read (a few KiB of
// a GPU's BAR) take a few: a 40 KB read in place took twice as long with the workers woken as
// with them spinning (decision 0013). The workers spin only this long after work, so an idle
// process spends no CPU time on them. 0: sleep at once (_native.copy_workers_spin). Nobody spins
// where the workers and the caller outnumber the CPU's cores: a spinning thread would then
// take a core that a thread with work needs.
std::atomic<int64_t> gSpinNs{ 100000 };
std::atomic<bool> gCoresToSpare{ true };

// the cores this process may run on (its affinity mask: a container's share, taskset's)
size_t
usableCores()
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        return (size_t)CPU_COUNT(&set);
    }
#endif
    return std::thread::hardware_concurrency();
}

std::chrono::nanoseconds
spinWindow()
{
    return std::chrono::nanoseconds(
      gCoresToSpare.load(std::memory_order_relaxed) ? gSpinNs.load(std::memory_order_relaxed)
                                                    : 0);
}

inline void
cpuRelax()
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    _mm_pause();
#endif
}

} // namespace

struct CopyJob
{
    uint8_t* dst;
    const uint8_t* src;
    size_t n, part, parts;
    bool stream = false;        // read with streaming loads (a GPU's BAR), not memcpy
    std::atomic<size_t> next{ 0 };
    std::atomic<size_t> remaining{ 0 };
    pid_t pid = getpid();       // a forked child never sees the parent's workers finish it
    std::mutex doneLock;
    std::condition_variable doneCv;

    // copy parts until none is left to take; true once every part of the job is done
    void work()
    {
        for (;;) {
            const size_t k = this->next.fetch_add(1);
            if (k >= this->parts) {
                return;
            }
            const size_t a = k * this->part;
            const size_t b = std::min(this->n, a + this->part);
            if (this->stream) {
                readStreaming(this->dst + a, this->src + a, b - a);
            } else {
                std::memcpy(this->dst + a, this->src + a, b - a);
            }
            // the part's stores (write-combining ones too) visible before it is counted done
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (this->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                std::lock_guard<std::mutex> lock(this->doneLock);
                this->doneCv.notify_all();
            }
        }
    }

    bool done() const { return this->remaining.load(std::memory_order_acquire) == 0; }

    void wait()
    {
        if (getpid() != this->pid) {
            return;
        }
        // a short copy's last parts end within microseconds: spin for them (up to the pool's
        // spin window) rather than sleep, which costs a wake-up of 10-50 us
        const auto until = std::chrono::steady_clock::now() + spinWindow();
        for (unsigned spins = 1;; spins++) {
            if (this->done()) {
                return;
            }
            if (spins % 64 == 0 && std::chrono::steady_clock::now() >= until) {
                break;
            }
            cpuRelax();
        }
        std::unique_lock<std::mutex> lock(this->doneLock);
        this->doneCv.wait(lock, [this] { return this->done(); });
    }
};

namespace {

// Whether a copy its caller waits for takes the pool's job slot when free (_native.copy_slot)
std::atomic<bool> gUseSlot{ true };

// The pool's one job slot: a copy that its caller waits for (parallel_copy, read_primary) goes
// here while no other thread's copy does, with no allocation, no queue lock and no reference
// count for the workers to take in turn; a worker counts the parts it did once, after its last.
// (A small read through the queue took about a third longer than through such a slot.) The part
// counter carries the job's generation in its high
// 32 bits, as does the part count the workers compare it with: a worker whose claim lands on a
// job already done (or the next one's count) takes nothing. While a worker holds a part, the
// job stays open, so the fields it reads are its job's.
struct CopySlot
{
    alignas(64) std::atomic<uint64_t> ticket{ 0 };     // generation << 32 | next part
    alignas(64) std::atomic<size_t> remaining{ 0 };     // parts not yet counted done
    alignas(64) std::atomic<uint64_t> parts{ 0 };       // generation << 32 | parts
    uint8_t* dst = nullptr;
    const uint8_t* src = nullptr;
    size_t n = 0, part = 0;
    bool stream = false;
    uint32_t gen = 0;                                   // (the owner's, under busy)
    std::atomic_flag busy = ATOMIC_FLAG_INIT;

    static bool open(uint64_t ticket, uint64_t parts)
    {
        return (ticket >> 32) == (parts >> 32) && (uint32_t)ticket < (uint32_t)parts;
    }

    // take parts of the open job until none is left; whether this thread took any
    bool work()
    {
        if (!open(this->ticket.load(std::memory_order_acquire),
                  this->parts.load(std::memory_order_acquire))) {
            return false;       // (no claim: the counter's line is left alone)
        }
        size_t done = 0;
        for (;;) {
            const uint64_t t = this->ticket.fetch_add(1, std::memory_order_acq_rel);
            if (!open(t, this->parts.load(std::memory_order_acquire))) {
                break;
            }
            const size_t a = (size_t)(uint32_t)t * this->part;
            const size_t b = std::min(this->n, a + this->part);
            if (this->stream) {
                readStreaming(this->dst + a, this->src + a, b - a);
            } else {
                std::memcpy(this->dst + a, this->src + a, b - a);
            }
            done++;
        }
        if (done == 0) {
            return false;
        }
        // the parts' stores (write-combining ones too) visible before they are counted done
        std::atomic_thread_fence(std::memory_order_seq_cst);
        this->remaining.fetch_sub(done, std::memory_order_acq_rel);
        return true;
    }
};

constexpr size_t kMaxWorkers = 15;

class CopyPool
{
  public:

    static CopyPool& get()
    {
        static const bool registered = [] {
#if defined(__unix__) || defined(__APPLE__)
            pthread_atfork(nullptr, nullptr, [] {
                CopyPool::sPool = nullptr;                  // (its workers are not in the child)
                new (&CopyPool::sCreate) std::mutex();      // (nor whoever held this)
            });
#endif
            return true;
        }();
        (void)registered;
        std::lock_guard<std::mutex> lock(sCreate);
        if (sPool == nullptr) {
            sPool = new CopyPool();     // never deleted: workers may outlive any owner
        }
        return *sPool;
    }

    // the part size and count of a copy of n bytes in parts of at least `part` bytes, at most
    // `most` of them (a streaming read: parts of at least 256 bytes, a multiple of 64, as many
    // as n gives; `most` threads take them as they come)
    static void shape(size_t n, size_t& part, size_t most, bool stream, size_t& parts)
    {
        part = stream ? std::max<size_t>(part, 256) / 64 * 64 : std::max<size_t>(part, 4096);
        most = std::min(std::max<size_t>(most, 1), kMaxWorkers + 1);
        parts = std::max<size_t>((n + part - 1) / part, 1);
        if (!stream && parts > most) {
            part = ((n + most - 1) / most + 4095) / 4096 * 4096;
            parts = std::max<size_t>((n + part - 1) / part, 1);
        }
    }

    // a job of n bytes shaped as above
    static std::shared_ptr<CopyJob> makeJob(uint8_t* dst,
                                            const uint8_t* src,
                                            size_t n,
                                            size_t part,
                                            size_t most,
                                            bool stream = false)
    {
        size_t parts;
        shape(n, part, most, stream, parts);
        auto job = std::make_shared<CopyJob>();
        job->dst = dst;
        job->src = src;
        job->n = n;
        job->part = part;
        job->parts = parts;
        job->stream = stream;
        job->remaining.store(parts);
        return job;
    }

    // Copy through the pool's one job slot (see CopySlot), the calling thread taking parts too,
    // and return once every part is done; false, copying nothing, where the slot is in use (by
    // another thread's copy) or switched off (_native.copy_slot): the caller then queues a job
    bool runInSlot(uint8_t* dst,
                   const uint8_t* src,
                   size_t n,
                   size_t part,
                   size_t parts,
                   bool stream,
                   size_t helpers)
    {
        CopySlot& slot = this->mSlot;
        if (!gUseSlot.load(std::memory_order_relaxed) ||
            slot.busy.test_and_set(std::memory_order_acquire)) {
            return false;
        }
        this->ensureWorkers(helpers);
        slot.dst = dst;
        slot.src = src;
        slot.n = n;
        slot.part = part;
        slot.stream = stream;
        const uint64_t gen = (uint64_t)(++slot.gen) << 32;
        slot.remaining.store(parts, std::memory_order_relaxed);
        slot.parts.store(gen | parts, std::memory_order_release);
        slot.ticket.store(gen, std::memory_order_release);     // (the job open: part 0 next)
        this->post();
        slot.work();
        const auto until = std::chrono::steady_clock::now() + spinWindow();
        for (unsigned spins = 1; slot.remaining.load(std::memory_order_acquire) != 0; spins++) {
            // a worker holds the last parts: spin for the window, then yield to it
            if (spins % 64 == 0 && std::chrono::steady_clock::now() >= until) {
                std::this_thread::yield();
            } else {
                cpuRelax();
            }
        }
        slot.busy.clear(std::memory_order_release);
        return true;
    }

    // restart every worker's spin window, waking those asleep (_native.copy_workers_wake)
    void wake() { this->post(); }

    // queue the job for `helpers` workers (made as needed)
    void start(const std::shared_ptr<CopyJob>& job, size_t helpers)
    {
        this->ensureWorkers(helpers);
        this->lockQueue();
        this->mJobs.push_back(job);
        this->unlockQueue();
        this->post();
    }

  private:
    void ensureWorkers(size_t helpers)
    {
        if (this->mWorkers.load(std::memory_order_acquire) < std::min(helpers, kMaxWorkers)) {
            std::lock_guard<std::mutex> lock(this->mLock);
            size_t workers = this->mWorkers.load();
            while (workers < std::min(helpers, kMaxWorkers)) {
                std::thread thread(&CopyPool::worker, this);
                keepOffAvoidedCpus(thread);     // (avoid_cpus: the GPU's interrupts')
                thread.detach();
                this->mWorkers.store(++workers, std::memory_order_release);
                gCoresToSpare.store(workers + 1 < usableCores());
            }
        }
    }

    // tell the workers something was posted: spinning ones see the counter, sleeping ones are
    // notified
    void post()
    {
        this->mPosted.fetch_add(1, std::memory_order_seq_cst);
        bool sleepers;
        {
            std::lock_guard<std::mutex> lock(this->mLock);
            sleepers = this->mSleeping > 0;
        }
        if (sleepers) {
            this->mWake.notify_all();
        }
    }

    void worker()
    {
        for (;;) {
            this->next()->work();
        }
    }

    // The queue's lock is a spin lock held for a few instructions: a mutex made the workers
    // that a post woke together queue on it, and the ones that lost slept in the kernel
    void lockQueue()
    {
        while (this->mQueueLock.test_and_set(std::memory_order_acquire)) {
            cpuRelax();
        }
    }

    void unlockQueue() { this->mQueueLock.clear(std::memory_order_release); }

    // the first queued job with parts left (none: null)
    std::shared_ptr<CopyJob> front()
    {
        std::shared_ptr<CopyJob> job;
        this->lockQueue();
        while (!this->mJobs.empty() &&
               this->mJobs.front()->next.load() >= this->mJobs.front()->parts) {
            this->mJobs.pop_front();           // (every part taken)
        }
        if (!this->mJobs.empty()) {
            job = this->mJobs.front();
        }
        this->unlockQueue();
        return job;
    }

    // the next job to work on: the slot's parts taken first, the queue looked in, then the post
    // counter watched for the spin window since this worker's last work or the last post (a
    // wake), then slept on until something is posted
    std::shared_ptr<CopyJob> next()
    {
        auto until = std::chrono::steady_clock::now() + spinWindow();
        for (;;) {
            const size_t seen = this->mPosted.load(std::memory_order_seq_cst);
            if (this->mSlot.work()) {
                until = std::chrono::steady_clock::now() + spinWindow();
                continue;
            }
            if (auto job = this->front()) {
                return job;
            }
            for (unsigned spins = 1;
                 this->mPosted.load(std::memory_order_acquire) == seen;
                 spins++) {
                if (spins % 64 == 0 && std::chrono::steady_clock::now() >= until) {
                    break;
                }
                cpuRelax();
            }
            if (this->mPosted.load(std::memory_order_seq_cst) == seen) {
                // (post() counts before it reads mSleeping under mLock: a post after this
                // check is seen by the wait's predicate, or its notify reaches the wait)
                std::unique_lock<std::mutex> lock(this->mLock);
                this->mSleeping++;
                this->mWake.wait(lock, [&] {
                    return this->mPosted.load(std::memory_order_seq_cst) != seen;
                });
                this->mSleeping--;
            }
            until = std::chrono::steady_clock::now() + spinWindow();
        }
    }

    static CopyPool* sPool;
    static std::mutex sCreate;
    std::mutex mLock;                   // mSleeping, and the making of workers
    std::condition_variable mWake;
    std::atomic_flag mQueueLock = ATOMIC_FLAG_INIT;
    std::deque<std::shared_ptr<CopyJob>> mJobs;
    std::atomic<size_t> mPosted{ 0 };   // jobs ever queued (what spinning workers watch)
    size_t mSleeping = 0;               // workers waiting on mWake (under mLock)
    std::atomic<size_t> mWorkers{ 0 };
    CopySlot mSlot;
};
CopyPool* CopyPool::sPool = nullptr;
std::mutex CopyPool::sCreate;
} // namespace

void
readPrimary(uint8_t* dst, const uint8_t* src, size_t nbytes, size_t threads, size_t part)
{
    if (threads <= 1 || nbytes <= part) {
        readStreaming(dst, src, nbytes);
        return;
    }
    // each thread's streaming loads keep a few lines in flight: BAR reads scale with threads
    // (decision 0013)
    size_t p = part, parts;
    CopyPool::shape(nbytes, p, threads, true, parts);
    if (std::min<size_t>(parts, threads) > 1 &&
        CopyPool::get().runInSlot(dst, src, nbytes, p, parts, true,
                                  std::min<size_t>(parts, threads) - 1)) {
        return;
    }
    auto job = CopyPool::makeJob(dst, src, nbytes, part, threads, true);
    const size_t helpers = std::min<size_t>(job->parts, threads) - 1;
    if (helpers > 0) {
        CopyPool::get().start(job, helpers);
    }
    job->work();
    job->wait();
}

void
parallelCopy(uint8_t* dst, const uint8_t* src, size_t n, size_t part, size_t most)
{
    size_t p = part, parts;
    CopyPool::shape(n, p, most, false, parts);
    if (parts > 1 && CopyPool::get().runInSlot(dst, src, n, p, parts, false, parts - 1)) {
        return;
    }
    auto job = CopyPool::makeJob(dst, src, n, part, most);
    if (job->parts > 1) {
        CopyPool::get().start(job, job->parts - 1);
    }
    job->work();            // the calling thread takes parts too
    job->wait();
}

CopyTask::CopyTask(uint8_t* dst, const uint8_t* src, size_t n, size_t part, size_t most)
  : mJob(CopyPool::makeJob(dst, src, n, part, most))
{
}

void
CopyTask::start()
{
    CopyPool::get().start(this->mJob, this->mJob->parts);
}

bool
CopyTask::done() const
{
    return this->mJob->done();
}

void
CopyTask::wait()
{
    this->mJob->wait();
}

int64_t
copyWorkersSpin(int64_t ns)
{
    if (ns < 0) {
        return gSpinNs.load();
    }
    return gSpinNs.exchange(std::min<int64_t>(ns, 1000000000));
}

int
copySlot(int flag)
{
    if (flag < 0) {
        return (int)gUseSlot.load();
    }
    return (int)gUseSlot.exchange(flag != 0);
}

void
copyWorkersWake()
{
    CopyPool::get().wake();
}

} // namespace native
} // namespace kompute_ml
