// CPUs kompute_ml's waiting and copying threads keep off: those that take the GPU's interrupts.
// A thread polling a fence on such a CPU is preempted by the driver's interrupt work just as the
// fence signals (a submit and wait took nearly twice as long there: docs/decisions/0005).
// Linux only (sched_setaffinity); elsewhere the list is kept and nothing moves.
#pragma once

#include <thread>
#include <vector>

namespace kompute_ml {
namespace native {

void setAvoidCpus(const std::vector<int>& cpus);
std::vector<int> avoidCpus();
// Move the calling thread off the avoided CPUs if it runs on one (and its mask allows another);
// its mask is restored at once: the thread stays where it moved. kp calls it before it polls a
// fence (kp::setBeforePollHook).
extern "C" void leaveAvoidedCpu();
// Restrict `thread` (a copy worker just made by the calling thread) to the calling thread's
// mask without the avoided CPUs, if any is left
void keepOffAvoidedCpus(std::thread& thread);

} // namespace native
} // namespace kompute_ml
