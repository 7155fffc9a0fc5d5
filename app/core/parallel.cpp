#include "parallel.hpp"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace wb {

void lower_thread_priority(int nice) {
#if defined(__linux__)
  // On Linux PRIO_PROCESS with a thread id sets that thread's nice value alone. Raising it needs
  // no privilege; a failure leaves the thread as it was.
  const id_t tid = id_t(::syscall(SYS_gettid));
  const int now = ::getpriority(PRIO_PROCESS, tid);
  (void)::setpriority(PRIO_PROCESS, tid, now + nice);
#else
  (void)nice;
#endif
}

} // namespace wb
