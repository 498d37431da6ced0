// The CPUs to avoid (affinity.hpp): one bit per CPU, read without a lock on every wait.
#include "affinity.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace kompute_ml {
namespace native {

namespace {
constexpr int kAvoidWords = 16;                 // CPUs 0-1023
std::atomic<uint64_t> gAvoid[kAvoidWords];      // (zero-initialised: static storage)
std::atomic<bool> gAvoidAny{ false };
std::mutex gAvoidLock;                          // setAvoidCpus's writers

bool
avoided(int cpu)
{
    return cpu >= 0 && cpu < 64 * kAvoidWords &&
           ((gAvoid[cpu / 64].load(std::memory_order_relaxed) >> (cpu % 64)) & 1);
}

#if defined(__linux__)
// the calling thread's mask without the avoided CPUs into `without`; false when nothing is left
bool
maskWithout(cpu_set_t& mask, cpu_set_t& without)
{
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0) {
        return false;
    }
    without = mask;
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < 64 * kAvoidWords; cpu++) {
        if (CPU_ISSET(cpu, &without) && avoided(cpu)) {
            CPU_CLR(cpu, &without);
        }
    }
    return CPU_COUNT(&without) > 0;
}
#endif
} // namespace

void
setAvoidCpus(const std::vector<int>& cpus)
{
    std::lock_guard<std::mutex> lock(gAvoidLock);
    uint64_t words[kAvoidWords] = {};
    bool any = false;
    for (int cpu : cpus) {
        if (cpu >= 0 && cpu < 64 * kAvoidWords) {
            words[cpu / 64] |= (uint64_t)1 << (cpu % 64);
            any = true;
        }
    }
    for (int k = 0; k < kAvoidWords; k++) {
        gAvoid[k].store(words[k], std::memory_order_relaxed);
    }
    gAvoidAny.store(any, std::memory_order_release);
}

std::vector<int>
avoidCpus()
{
    std::vector<int> cpus;
    for (int cpu = 0; cpu < 64 * kAvoidWords; cpu++) {
        if (avoided(cpu)) {
            cpus.push_back(cpu);
        }
    }
    return cpus;
}

void
leaveAvoidedCpu()
{
#if defined(__linux__)
    if (!gAvoidAny.load(std::memory_order_acquire) || !avoided(sched_getcpu())) {
        return;
    }
    cpu_set_t mask, without;
    if (maskWithout(mask, without) && sched_setaffinity(0, sizeof(without), &without) == 0) {
        (void)sched_setaffinity(0, sizeof(mask), &mask);    // the caller's mask as it was
    }
#endif
}

void
keepOffAvoidedCpus(std::thread& thread)
{
#if defined(__linux__)
    if (!gAvoidAny.load(std::memory_order_acquire)) {
        return;
    }
    cpu_set_t mask, without;
    if (maskWithout(mask, without)) {
        (void)pthread_setaffinity_np(thread.native_handle(), sizeof(without), &without);
    }
#else
    (void)thread;
#endif
}

} // namespace native
} // namespace kompute_ml
