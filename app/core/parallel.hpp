// Splits [0, n) into contiguous chunks run on up to hardware_concurrency threads. Host-side work
// on perf-size buffers (2^26 elements and more) is too slow on one core.
#pragma once
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace wb {

// Lowers the calling thread's scheduling priority by `nice` steps (Linux: a thread has its own
// nice value; elsewhere nothing). Work that can wait (the prediction's sampled run) then leaves
// the cores to what the learner is waiting for (ptxas, the check's cases).
void lower_thread_priority(int nice);

// fn(chunk_index, begin, end); returns the number of chunks used. Small n runs inline.
template <class F> int parallel_chunks(int64_t n, F&& fn, int64_t min_chunk = 1 << 16) {
  int threads = int(std::clamp<int64_t>(n / std::max<int64_t>(1, min_chunk), 1,
                                        std::max(1u, std::thread::hardware_concurrency())));
  if (threads == 1) {
    fn(0, int64_t(0), n);
    return 1;
  }
  std::vector<std::thread> pool;
  int64_t step = (n + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    int64_t b = t * step, e = std::min(n, b + step);
    pool.emplace_back([&fn, t, b, e] { fn(t, b, e); });
  }
  for (auto& th : pool) th.join();
  return threads;
}

} // namespace wb
