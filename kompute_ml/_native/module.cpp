// kompute_ml._native: this project's own native code (copy.hpp, affinity.hpp) for Python.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "affinity.hpp"
#include "copy.hpp"

namespace py = pybind11;
using namespace kompute_ml::native;

#ifndef KOMPUTE_ML_BUILD_STAMP
#error "KOMPUTE_ML_BUILD_STAMP must name the patch set and native sources (CMakeLists.txt)"
#endif

namespace {

// a copy started on the workers (parallel_copy_start): it holds the two arrays until done
struct CopyHandle
{
    std::unique_ptr<CopyTask> task;
    py::object dst, src;

    void wait()
    {
        if (this->task && !this->task->done()) {
            py::gil_scoped_release release;
            this->task->wait();
        }
    }

    ~CopyHandle()
    {
        if (this->task && !this->task->done()) {
            this->task->wait();     // (the arrays must outlive the workers' copies)
        }
    }
};

std::pair<uint8_t*, const uint8_t*>
copyArgs(py::array& dst, py::array& src)
{
    if (!(dst.flags() & py::array::c_style) || !dst.writeable()) {
        throw std::runtime_error("parallel_copy needs a writable C-contiguous destination");
    }
    if (!(src.flags() & py::array::c_style)) {
        throw std::runtime_error("parallel_copy needs a C-contiguous source");
    }
    if (dst.nbytes() != src.nbytes()) {
        throw std::runtime_error("parallel_copy: " + std::to_string(src.nbytes()) +
                                 " bytes into " + std::to_string(dst.nbytes()));
    }
    return { (uint8_t*)dst.mutable_data(), (const uint8_t*)src.data() };
}

} // namespace

PYBIND11_MODULE(_native, m)
{
    m.doc() = "kompute_ml's native host copies, streaming reads and CPU affinity";
    m.attr("BUILD_STAMP") = KOMPUTE_ML_BUILD_STAMP;

    m.def(
      "read_primary",
      [](py::array out, py::array src, uint64_t offset, uint64_t threads, uint64_t part) {
          // bytes [offset, offset + out.nbytes) of src (mapped device memory) into out
          if (!(out.flags() & py::array::c_style) || !out.writeable()) {
              throw std::runtime_error("read_primary needs a writable C-contiguous array");
          }
          if (!(src.flags() & py::array::c_style)) {
              throw std::runtime_error("read_primary needs a C-contiguous source");
          }
          const uint64_t nbytes = (uint64_t)out.nbytes();
          const uint64_t size = (uint64_t)src.nbytes();
          if (offset > size || nbytes > size - offset) {
              throw std::runtime_error("read_primary: bytes [" + std::to_string(offset) + ", " +
                                       std::to_string(offset + nbytes) +
                                       ") are outside the source's " + std::to_string(size) +
                                       " bytes");
          }
          uint8_t* dst = (uint8_t*)out.mutable_data();
          const uint8_t* from = (const uint8_t*)src.data() + offset;
          py::gil_scoped_release release;
          readPrimary(dst, from, (size_t)nbytes, (size_t)threads, (size_t)part);
      },
      py::arg("out"),
      py::arg("src"),
      py::arg("offset") = 0,
      py::arg("threads") = 1,
      py::arg("part") = 2048,
      "Copy src's bytes (a tensor's mapped device memory) from byte offset into the "
      "C-contiguous array out, with streaming loads where the CPU has them (a GPU's BAR reads "
      "back line by line otherwise), in parts of part bytes on up to threads threads (the "
      "calling thread and the native copy workers)");

    m.def(
      "parallel_copy",
      [](py::array dst, py::array src, uint64_t part, uint64_t most) {
          auto ptrs = copyArgs(dst, src);
          const size_t n = (size_t)dst.nbytes();
          py::gil_scoped_release release;
          parallelCopy(ptrs.first, ptrs.second, n, (size_t)part, (size_t)most);
      },
      py::arg("dst"),
      py::arg("src"),
      py::arg("part") = 1 << 20,
      py::arg("most") = 4,
      "Copy src's bytes into dst (C-contiguous, the same byte count) in parts of at least "
      "part bytes on at most most threads, the calling thread included (native workers: no "
      "GIL)");

    m.def(
      "copy_workers_spin",
      [](int64_t ns) { return copyWorkersSpin(ns); },
      py::arg("ns") = -1,
      "The time in nanoseconds the copy workers (and a caller waiting for a copy) look for "
      "work before they sleep, set to ns when ns >= 0 (at most 1 s); returns the previous "
      "value");

    m.def(
      "avoid_cpus",
      [](py::object cpus) {
          std::vector<int> before = avoidCpus();
          if (!cpus.is_none()) {
              setAvoidCpus(cpus.cast<std::vector<int>>());
          }
          return before;
      },
      py::arg("cpus") = py::none(),
      "The CPUs that a thread waiting for the GPU moves off before it polls (those taking the "
      "GPU's interrupts; its affinity mask is restored at once) and that copy workers made "
      "afterwards keep off; set to cpus when given (an empty list: none). Returns the previous "
      "list");

    m.def(
      "before_poll_hook",
      []() { return (uintptr_t)&leaveAvoidedCpu; },
      "The address of the C function that moves the calling thread off the avoided CPUs: kp "
      "calls it before it polls a fence (_kp.set_before_poll_hook)");

    m.def(
      "leave_avoided_cpu",
      []() { leaveAvoidedCpu(); },
      "Move the calling thread off the avoided CPUs if it runs on one (what the hook does)");

    m.def(
      "copy_slot",
      [](int flag) { return copySlot(flag); },
      py::arg("flag") = -1,
      "Whether a copy its caller waits for (parallel_copy, read_primary) goes through the copy "
      "workers' one job slot while no other thread's copy does (1, the default) or through "
      "their queue of jobs (0), set when flag >= 0; returns the previous value");

    m.def(
      "copy_workers_wake",
      []() { copyWorkersWake(); },
      "Restart every copy worker's spin window (copy_workers_spin), waking those asleep: "
      "called ahead of a split copy, e.g. before waiting for the GPU work it reads, the "
      "workers are looking for work when it starts");

    py::class_<CopyHandle, std::shared_ptr<CopyHandle>>(
      m, "CopyHandle", "A copy running on the native workers (parallel_copy_start)")
      .def("wait", &CopyHandle::wait, "Wait until every byte is copied")
      .def("done", [](CopyHandle& self) { return !self.task || self.task->done(); });

    m.def(
      "parallel_copy_start",
      [](py::array dst, py::array src, uint64_t part, uint64_t most) {
          auto ptrs = copyArgs(dst, src);
          auto handle = std::make_shared<CopyHandle>();
          handle->dst = dst;
          handle->src = src;
          handle->task = std::make_unique<CopyTask>(
            ptrs.first, ptrs.second, (size_t)dst.nbytes(), (size_t)part, (size_t)most);
          {
              py::gil_scoped_release release;
              handle->task->start();
          }
          return handle;
      },
      py::arg("dst"),
      py::arg("src"),
      py::arg("part") = 1 << 20,
      py::arg("most") = 4,
      "Start copying src's bytes into dst (as parallel_copy) on native workers alone and return "
      "a CopyHandle (wait(), done()); the handle keeps both arrays until the copy is done");
}
