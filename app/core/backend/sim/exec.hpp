// Running one launch of a decoded kernel (exec.cpp).
#pragma once
#include "machine.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <thread>

namespace wb::sim {

// What a launch's workers counted, merged.
struct LaunchTotals {
  std::vector<InstCount> ic; // per instruction
  uint32_t max_gloads = 0, max_gstores = 0;
};

// A small pool of worker threads, kept between runs (starting threads costs more than running
// a small kernel).
class Pool {
public:
  explicit Pool(unsigned threads, int nice = 0);
  ~Pool();
  unsigned size() const { return unsigned(threads_.size()) + 1; }
  // Starts f(1..n-1) on pool threads (f must outlive wait()); wait() returns when they are done.
  void start(unsigned n, const std::function<void(unsigned)>& f);
  void wait();
  // Whether pool threads are spinning (busy-waiting for work after a recent run).
  bool spinning() const { return spinning_.load(std::memory_order_relaxed) > 0; }
  static constexpr std::chrono::microseconds kSpin{300};
  // One worker state per thread, kept between runs so their memory is reused.
  std::vector<Exec>& execs() { return execs_; }

private:
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned want_ = 0, left_ = 0;
  std::atomic<uint64_t> gen_{0};
  std::atomic<int> spinning_{0};
  bool quit_ = false;
  bool started_ = false;
  std::vector<Exec> execs_;
};

// Runs every block of L's grid on up to `max_workers` threads of `pool` (0: all). Faults, printf
// output and warnings are left in L.
void run_launch(LaunchCtx& L, Pool& pool, unsigned max_workers, LaunchTotals& out);

} // namespace wb::sim
