// Helpers for the GPU tests: a backend per test, kernels compiled with NVRTC for the device,
// buffers with guard bands, plans, and running one test case in a child process (sticky faults and
// endless kernels poison or hold the context, so they must not share the test process).
#pragma once
#include "core/backend.hpp"
#include "core/compile.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <signal.h>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace gpu {

inline constexpr std::byte kGuard{0x5a};
inline constexpr size_t kGuardBytes = 256;

inline std::unique_ptr<wb::Backend> backend() {
  std::string why;
  auto b = wb::make_cuda_backend(why);
  REQUIRE_MESSAGE(b, "no CUDA backend: " << why);
  return b;
}

inline wb::Program compile(wb::Backend& b, const std::string& src) {
  wb::Program p = wb::compile_source(src, "test.cu", b.compile_options());
  REQUIRE_MESSAGE(p.ok, p.log);
  return p;
}

template <class T> wb::HostBuffer buffer(const std::string& name, const std::vector<T>& v) {
  wb::HostBuffer h;
  h.name = name;
  h.type = sizeof(T) == 4 ? wb::DType::f32 : wb::DType::u8;
  h.data_bytes = v.size() * sizeof(T);
  h.guard_bytes = kGuardBytes;
  h.image.assign(h.data_bytes + 2 * kGuardBytes, kGuard);
  std::memcpy(h.data(), v.data(), h.data_bytes);
  return h;
}

inline wb::HostBuffer output(const std::string& name, size_t bytes) {
  wb::HostBuffer h;
  h.name = name;
  h.data_bytes = bytes;
  h.guard_bytes = kGuardBytes;
  h.image.assign(bytes + 2 * kGuardBytes, kGuard);
  std::memset(h.data(), 0xff, bytes); // poison: NaN as floats
  return h;
}

template <class T> std::vector<T> contents(const wb::HostBuffer& h) {
  std::vector<T> v(h.data_bytes / sizeof(T));
  std::memcpy(v.data(), h.data(), v.size() * sizeof(T));
  return v;
}

inline bool guards_intact(const wb::HostBuffer& h) {
  for (size_t i = 0; i < h.guard_bytes; ++i)
    if (h.image[i] != kGuard || h.image[h.guard_bytes + h.data_bytes + i] != kGuard) return false;
  return true;
}

inline wb::KernelArg buf(int index, const std::string& name = "") {
  return wb::KernelArg::of_buffer(index, name.empty() ? "buffer" + std::to_string(index) : name);
}

template <class T> wb::KernelArg scalar(T v, const std::string& name = "n") {
  return wb::KernelArg::of_scalar(v, name);
}

inline wb::Launch launch(const std::string& kernel, wb::Dim3 grid, wb::Dim3 block,
                         std::vector<wb::KernelArg> args, uint32_t shared = 0) {
  wb::Launch l;
  l.kernel = kernel;
  l.grid = grid;
  l.block = block;
  l.args = std::move(args);
  l.shared_bytes = shared;
  return l;
}

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// True inside the child that runs one test case for the parent (see in_child).
inline bool is_child() {
  return std::getenv("WARPBOOK_GPU_CHILD") != nullptr;
}

// Runs test case `name` of this executable in a child process; returns its exit status, or -1 if
// it had to be killed after `limit_s`.
inline int in_child(const std::string& name, double limit_s = 120) {
  std::string exe(4096, '\0');
  ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  REQUIRE(n > 0);
  exe.resize(size_t(n));
  std::string filter = "--test-case=" + name;
  char* argv[] = {exe.data(), filter.data(), const_cast<char*>("--no-intro"), nullptr};
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
  env_s.emplace_back("WARPBOOK_GPU_CHILD=1");
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (ms_since(t0) > limit_s * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  MESSAGE("child '" << name << "' ended in " << ms_since(t0) << " ms");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace gpu
