// kompute_ml's native host copies (copy.cpp): no Python here, module.cpp binds them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kompute_ml {
namespace native {

// n bytes from src (mapped device memory: streaming loads where the CPU has them) to dst
void readStreaming(uint8_t* dst, const uint8_t* src, size_t n);

// readStreaming on up to `threads` threads (the caller's and the copy workers) in parts of
// `part` bytes
void readPrimary(uint8_t* dst, const uint8_t* src, size_t nbytes, size_t threads, size_t part);

// n bytes from src to dst in parts of at least `part` bytes on at most `most` threads, the
// caller's included; returns when every part is copied
void parallelCopy(uint8_t* dst, const uint8_t* src, size_t n, size_t part, size_t most);

struct CopyJob;

// a copy on the workers alone: start() queues it, wait() returns when every byte is copied
class CopyTask
{
  public:
    CopyTask(uint8_t* dst, const uint8_t* src, size_t n, size_t part, size_t most);
    void start();
    bool done() const;
    void wait();

  private:
    std::shared_ptr<CopyJob> mJob;
};

// the copy workers' spin window in ns, set when ns >= 0 (at most 1 s); the previous value
int64_t copyWorkersSpin(int64_t ns);
// whether a copy its caller waits for takes the workers' one job slot, set when flag >= 0
int copySlot(int flag);
// restart every worker's spin window, waking those asleep
void copyWorkersWake();

} // namespace native
} // namespace kompute_ml
