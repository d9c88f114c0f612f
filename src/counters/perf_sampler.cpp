// Sampled counters: perf_event_open with a sample period, per thread, into mmapped ring buffers
// (perf_event_open(2), "MMAP layout"). Nothing here runs per op: the recorder enables the
// events as a call starts, disables them as it stops, and drains the buffers then.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <unordered_map>

#include "counters/perf_events.h"
#include "counters/counters.h"

namespace layoutprof {

using namespace perf_detail;

namespace {

size_t page_size() {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

bool is_page_fault_event(const perf_event_attr& a) {
  return a.type == PERF_TYPE_SOFTWARE &&
         (a.config == PERF_COUNT_SW_PAGE_FAULTS || a.config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
          a.config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);
}

// Events per sample where --events gives none: a few hundred to a few thousand samples a second
// at the rates these events run at on a busy core, primes so that the sampling does not lock
// onto a loop's period. The clock events are timer interrupts: one costs 15-20 us in these VMs
// (bench.sh's counters table), so 500 a second, where perf record's default of 4000 would cost
// 7% of the time; a recording in process asks for fewer (SamplingOptions::clock_period_ns).
uint64_t default_period(const Encoded& e, uint64_t clock_period_ns) {
  if (is_clock_event(e)) return clock_period_ns;  // ns of task-clock / cpu-clock
  if (is_page_fault_event(e.attr)) return 16;  // a sample per 64 KB of memory first touched (4 KB pages)
  if (e.attr.type == PERF_TYPE_SOFTWARE) return 1009;
  if (e.attr.type == PERF_TYPE_HARDWARE &&
      (e.attr.config == PERF_COUNT_HW_CPU_CYCLES || e.attr.config == PERF_COUNT_HW_INSTRUCTIONS ||
       e.attr.config == PERF_COUNT_HW_REF_CPU_CYCLES || e.attr.config == PERF_COUNT_HW_BUS_CYCLES))
    return 2000003;
  if (e.attr.type == PERF_TYPE_HW_CACHE) return 10007;  // misses and accesses of a cache or TLB
  return 100003;
}

constexpr uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;

struct Ring {
  void* base = MAP_FAILED;
  size_t bytes = 0;
  int fd = -1;           // the event that owns it: readable (poll) once the ring is half full
  bool hung_up = false;  // its thread exited: no more polled; under the sampler's mutex
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    if (base != MAP_FAILED) ::munmap(base, bytes);
  }
};

// Maps a ring of 2^n data pages on `fd`, halving from `pages` where the locked-memory limit
// (perf_event_mlock_kb, RLIMIT_MEMLOCK) refuses; nullptr, with errno, when none fits.
std::unique_ptr<Ring> map_ring(int fd, size_t pages) {
  for (; pages >= 1; pages /= 2) {
    auto ring = std::make_unique<Ring>();
    ring->bytes = (pages + 1) * page_size();
    ring->base = ::mmap(nullptr, ring->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring->base != MAP_FAILED) {
      ring->fd = fd;
      return ring;
    }
    if (errno != EPERM && errno != ENOMEM) return nullptr;
  }
  return nullptr;
}

// The attributes every sampled event shares: its period (default_period() where the event
// names none), the fields of its samples, disabled until enable(), and times on the clock the
// ops are timed by.
void set_sampling(Encoded& e, uint64_t clock_period_ns) {
  perf_event_attr& a = e.attr;
  if (a.sample_period == 0) a.sample_period = default_period(e, clock_period_ns);
  a.sample_type = kSampleType;
  a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  a.disabled = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;  // std::chrono::steady_clock's clock
}

// Opens `a` alone on thread `tid` to see whether the kernel samples it, and closes it again.
// Hardware events: precise samples (Intel PEBS, AMD IBS) where the PMU has them: the
// instruction that caused the event, and for memory events its data address. Leaves
// a.precise_ip at the level that opened; false, with the reason in `st`, where none did.
bool probe_sampling(perf_event_attr& a, int tid, CounterStatus& st) {
  const bool try_precise = a.type != PERF_TYPE_SOFTWARE && a.precise_ip == 0;
  EventFd fd;
  int err = 0;
  const int lowest = try_precise ? 0 : static_cast<int>(a.precise_ip);
  for (int precise = try_precise ? 2 : lowest; precise >= lowest && !fd; --precise) {
    a.precise_ip = static_cast<uint64_t>(precise);
    fd = open_probe(a, tid, -1, st.note);
    err = errno;
  }
  if (fd) return true;
  st.reason = err == EINVAL ? std::strerror(err) +
                                  std::string(": the kernel refuses to sample it (no sampling "
                                              "interrupt on this PMU, or no use_clockid)")
                            : open_failure(err);
  return false;
}

// A probed event's status: measured, its period, and what its samples' addresses are.
void set_measured(CounterStatus& st, const perf_event_attr& a) {
  st.measured = true;
  st.period = a.sample_period;
  if (is_page_fault_event(a)) st.data_address = "the faulting address (page-faults)";
  else if (a.precise_ip > 0)
    st.data_address = "precise samples (precise_ip " + std::to_string(a.precise_ip) +
                      ": PEBS/IBS), with data addresses where the event is a memory access";
}

// One thread's sampled events, all writing into the first one's ring.
struct ThreadEvents {
  std::vector<EventFd> opened;
  std::unique_ptr<Ring> ring;
  std::vector<uint64_t> ids;  // each event's sample id
};

// Why a thread's ring could not be mapped (`err`, mmap's errno): the locked-memory limit, said
// with the setting that sets it.
std::string ring_failure(int err) {
  if (err != EPERM && err != ENOMEM) return open_failure(err);
  std::ifstream sysctl("/proc/sys/kernel/perf_event_mlock_kb");
  std::string kb;
  sysctl >> kb;
  return "its ring buffer is over the locked-memory limit (perf_event_mlock_kb " + (kb.empty() ? "?" : kb) +
         " KB per CPU for the user's perf buffers, then RLIMIT_MEMLOCK; raise either, or give CAP_IPC_LOCK)";
}

// Opens `usable` on thread `tid`, maps a ring of `pages` data pages (fewer where the
// locked-memory limit refuses) on the first, points the others' output at it and reads each
// one's sample id. False, with `why` saying why, where a step failed (a thread that exited since
// it was listed fails to open): what was set up stays in `t`.
bool open_thread_events(const std::vector<Encoded>& usable, int tid, size_t pages, ThreadEvents& t,
                        std::string& why) {
  for (const Encoded& e : usable) {
    perf_event_attr a = e.attr;
    EventFd fd = open_event(a, tid, -1, -1);
    if (!fd) return why = open_failure(errno), false;
    t.opened.push_back(std::move(fd));
  }
  t.ring = map_ring(t.opened.front().get(), pages);
  if (!t.ring) return why = ring_failure(errno), false;
  for (size_t k = 1; k < t.opened.size(); ++k)
    if (::ioctl(t.opened[k].get(), PERF_EVENT_IOC_SET_OUTPUT, t.opened.front().get()) != 0)
      return why = open_failure(errno), false;
  t.ids.assign(t.opened.size(), 0);
  for (size_t k = 0; k < t.opened.size(); ++k)
    if (::ioctl(t.opened[k].get(), PERF_EVENT_IOC_ID, &t.ids[k]) != 0) return why = open_failure(errno), false;
  return true;
}

}  // namespace

struct PerfSampler::Impl {
  std::vector<CounterStatus> status;
  std::vector<uint64_t> periods;  // per measured event
  struct Fd {
    EventFd fd;
    uint32_t counter;
    // A software event alone in its group is never multiplexed (the software PMU is not
    // rotated), so drain() reads no times for it: a read of an event running on another CPU
    // interrupts that CPU, which costs tens of microseconds a read in a virtual machine.
    bool multiplexes = true;
    uint64_t enabled = 0, running = 0;  // at the last drain
  };
  std::vector<Fd> fds;
  std::vector<std::unique_ptr<Ring>> rings;  // one per thread
  std::unordered_map<uint64_t, uint32_t> counter_of;  // sample id -> measured event
  bool enabled = false;
  size_t events = 0;  // sampled per-thread events
  size_t threads = 0;
  size_t ring_kb = 0;
  std::vector<Encoded> usable;  // the events that can be sampled, for the threads opened later
  std::set<int> seen;            // the threads tried, opened or not, and the reader; under `mutex`
  std::vector<std::string> not_sampled;  // "thread TID: why", each thread whose events could not be set up

  // While enabled, a thread of the sampler's own (`reader`) sleeps in poll() until a ring is
  // half full (the kernel's default wake-up mark; the ring is then emptied into `staged`, so
  // that a long call loses no samples), or until the uncore events' next `interval` reading is
  // due, or until `control` (an eventfd) says the state changed. It wakes for nothing else: a
  // timer would take a CPU from the model's threads. `mutex` guards the rings' tails and
  // hang-ups, `staged`, the uncore snapshots and the flags.
  std::optional<PerfCounters> uncore;  // counted system-wide
  std::chrono::nanoseconds interval{1000000};
  uint64_t clock_period_ns = SamplingOptions{}.clock_period_ns;  // where an event names no period
  std::thread reader;
  EventFd control;
  std::mutex mutex;
  std::condition_variable wake;  // the reader's start
  bool reading = false, quit = false, reader_known = false;
  std::vector<std::pair<int64_t, std::vector<uint64_t>>> snapshots;  // (steady ns, snapshot)
  std::vector<uint64_t> drained;  // the last snapshot drain() read: the next interval starts there
  std::vector<RawSample> staged;  // samples the reader took off the rings since the last drain()
  std::vector<uint64_t> staged_lost;

  size_t uncore_events() const { return uncore ? uncore->events() : 0; }

  // The uncore events: counted system-wide (PerfCounters' groups per socket), read at
  // intervals. Their statuses go after the per-thread ones (append_interval_statuses).
  void add_interval_events(const BandwidthEvents& bandwidth) {
    if (bandwidth.events.empty() || bandwidth.cpus.empty()) return;
    uncore.emplace(PerfCounters::create({}, {}, bandwidth));
  }

  // Each requested event encoded and probed on the first thread, its status in `status` (the
  // measured ones first, in their order, as the values will come): those that can be sampled.
  std::vector<Encoded> probe_events(const std::vector<std::string>& names, const std::vector<int>& tids) {
    std::vector<Encoded> encoded;
    for (const std::string& name : names) probe_event(name, tids, encoded);
    std::stable_partition(status.begin(), status.end(), [](const CounterStatus& c) { return c.measured; });
    for (const Encoded& e : encoded) periods.push_back(e.attr.sample_period);
    events = encoded.size();
    return encoded;
  }

  // One requested event's status, appended to `status`; its encoding appended to `usable`
  // where it can be sampled.
  void probe_event(const std::string& name, const std::vector<int>& tids, std::vector<Encoded>& usable) {
    CounterStatus st;
    st.event = name;
    st.mode = CounterMode::sampled;
    try {
      Encoded e = encode_event(name);
      st.encoding = e.name;
      if (e.attr.freq) throw std::runtime_error("a sampled event needs a fixed period (:period=N), not :freq");
      if (tids.empty()) throw std::runtime_error("no thread to sample");
      set_sampling(e, clock_period_ns);
      if (probe_sampling(e.attr, tids.front(), st)) {
        set_measured(st, e.attr);
        usable.push_back(e);
      }
    } catch (const std::exception& ex) {
      st.reason = ex.what();
    }
    status.push_back(st);
  }

  // Each thread's events and ring. A thread that cannot be set up is left out, and named; where
  // forward()'s own thread (the first of a new sampler) cannot, nothing is sampled.
  void open_threads(const std::vector<int>& tids, bool first_thread) {
    for (int tid : tids) {
      if (usable.empty()) break;
      seen.insert(tid);
      ThreadEvents t;
      std::string why;
      // forward()'s thread takes most samples: a larger ring.
      if (!open_thread_events(usable, tid, first_thread ? 256 : 128, t, why)) {
        t.ring.reset();
        t.opened.clear();
        if (first_thread) {
          sample_nothing(why);
          return;
        }
        not_sampled.push_back("thread " + std::to_string(tid) + ": " + why);
        continue;
      }
      if (first_thread) ring_kb = (t.ring->bytes - page_size()) / 1024;
      first_thread = false;
      for (size_t k = 0; k < t.opened.size(); ++k) {
        fds.push_back({std::move(t.opened[k]), static_cast<uint32_t>(k), usable[k].attr.type != PERF_TYPE_SOFTWARE});
        counter_of[t.ids[k]] = static_cast<uint32_t>(k);
      }
      rings.push_back(std::move(t.ring));
      ++threads;
    }
  }

  // forward()'s own thread has no ring (`why`): no per-thread event is measured.
  void sample_nothing(const std::string& why) {
    for (CounterStatus& st : status)
      if (st.measured) {
        st.measured = false;
        st.reason = "its ring buffer could not be set up: " + why;
      }
    events = 0;
    periods.clear();
  }

  // Starts the reader, and waits until it has put itself among the threads never sampled.
  void start_reader() {
    staged_lost.assign(events, 0);
    if (uncore_events() == 0 && rings.empty()) return;
    control = EventFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!control) throw std::runtime_error(std::string("no eventfd for the sampler's reader: ") + std::strerror(errno));
    reader = std::thread([this] { read_loop(); });
    std::unique_lock<std::mutex> lock(mutex);
    wake.wait(lock, [&] { return reader_known; });
  }

  void append_interval_statuses() {
    if (!uncore) return;
    for (CounterStatus st : uncore->status()) {
      st.mode = CounterMode::interval;
      if (st.measured) {
        st.period = static_cast<uint64_t>(interval.count());
        st.note = "read system-wide every " + std::to_string(interval.count() / 1000) +
                  " us, each interval's count shared among the ops running in it by time" +
                  (st.note.empty() ? "" : "; " + st.note);
      }
      status.push_back(st);
    }
  }

  void take_snapshot() {  // under `mutex`
    std::vector<uint64_t> snap(uncore->snapshot_size());
    uncore->read(snap.data());
    snapshots.emplace_back(std::chrono::steady_clock::now().time_since_epoch().count(), std::move(snap));
  }

  // Tells the reader that the flags or the rings changed.
  void signal() const {
    const uint64_t one = 1;
    if (control) (void)!::write(control.get(), &one, sizeof one);
  }

  // The reader's poll set, under `mutex`: `control` first, then the rings not hung up while
  // enabled (`polled`: their indexes).
  std::vector<pollfd> poll_set(std::vector<size_t>& polled) const {
    std::vector<pollfd> set{{control.get(), POLLIN, 0}};
    polled.clear();
    for (size_t k = 0; reading && k < rings.size(); ++k)
      if (!rings[k]->hung_up) {
        set.push_back({rings[k]->fd, POLLIN, 0});
        polled.push_back(k);
      }
    return set;
  }

  void read_loop() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      seen.insert(static_cast<int>(::syscall(SYS_gettid)));  // never sampled: its work is layoutprof's
      reader_known = true;
    }
    wake.notify_all();
    std::vector<size_t> polled;
    auto next_reading = std::chrono::steady_clock::now();
    bool was_reading = false;
    while (true) {
      std::vector<pollfd> set;
      bool timed = false;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (quit) return;
        set = poll_set(polled);
        timed = reading && uncore_events() > 0;
        if (reading && !was_reading) next_reading = std::chrono::steady_clock::now() + interval;  // enable() read
        was_reading = reading;
      }
      const auto left = std::max(next_reading - std::chrono::steady_clock::now(), std::chrono::nanoseconds(0));
      const timespec timeout{static_cast<time_t>(left.count() / 1000000000), static_cast<long>(left.count() % 1000000000)};
      if (::ppoll(set.data(), set.size(), timed ? &timeout : nullptr, nullptr) < 0 && errno != EINTR) return;
      uint64_t signals = 0;
      if (set[0].revents & POLLIN) (void)!::read(control.get(), &signals, sizeof signals);
      std::lock_guard<std::mutex> lock(mutex);
      if (reading && uncore_events() > 0 && std::chrono::steady_clock::now() >= next_reading) {
        take_snapshot();
        next_reading = std::chrono::steady_clock::now() + interval;
      }
      for (size_t i = 1; i < set.size(); ++i) {
        Ring& ring = *rings[polled[i - 1]];
        if (set[i].revents & (POLLHUP | POLLERR | POLLNVAL)) ring.hung_up = true;
        if (set[i].revents & (POLLIN | POLLHUP)) drain_ring(ring, staged, staged_lost);
      }
    }
  }

  ~Impl() {
    if (reader.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        quit = true;
      }
      signal();
      reader.join();
    }
    rings.clear();  // unmapped before `fds` close
  }

  // Under `mutex`.
  void drain_ring(const Ring& ring, std::vector<RawSample>& samples, std::vector<uint64_t>& lost) const {
    auto* meta = static_cast<perf_event_mmap_page*>(ring.base);
    const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail;
    const auto* data = static_cast<const unsigned char*>(ring.base) + page_size();
    const uint64_t size = ring.bytes - page_size();
    std::vector<unsigned char> record;
    while (tail + sizeof(perf_event_header) <= head) {
      perf_event_header h;
      copy_out(data, size, tail, &h, sizeof h);
      if (h.size < sizeof h || tail + h.size > head) break;
      record.resize(h.size);
      copy_out(data, size, tail, record.data(), h.size);
      tail += h.size;
      const auto* words = reinterpret_cast<const uint64_t*>(record.data() + sizeof h);
      const size_t n = (h.size - sizeof h) / sizeof(uint64_t);
      if (h.type == PERF_RECORD_SAMPLE && n >= 5) {
        // id, ip, pid|tid, time, addr: kSampleType's fields in the kernel's order.
        auto it = counter_of.find(words[0]);
        if (it == counter_of.end()) continue;
        RawSample s;
        s.counter = it->second;
        uint32_t pid_tid[2];
        std::memcpy(pid_tid, &words[2], sizeof pid_tid);
        s.tid = static_cast<int32_t>(pid_tid[1]);
        s.time_ns = static_cast<int64_t>(words[3]);
        s.addr = words[4];
        samples.push_back(s);
      } else if (h.type == PERF_RECORD_LOST && n >= 2) {
        auto it = counter_of.find(words[0]);
        if (it != counter_of.end()) lost[it->second] += words[1];
      }
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  }

  static void copy_out(const unsigned char* data, uint64_t size, uint64_t at, void* to, size_t n) {
    const uint64_t from = at % size;
    const size_t first = static_cast<size_t>(std::min<uint64_t>(n, size - from));
    std::memcpy(to, data + from, first);
    if (first < n) std::memcpy(static_cast<unsigned char*>(to) + first, data, n - first);
  }
};

PerfSampler::PerfSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PerfSampler::PerfSampler(PerfSampler&&) noexcept = default;
PerfSampler& PerfSampler::operator=(PerfSampler&&) noexcept = default;
PerfSampler::~PerfSampler() = default;

const std::vector<CounterStatus>& PerfSampler::status() const { return impl_->status; }
size_t PerfSampler::events() const { return impl_->events + impl_->uncore_events(); }
size_t PerfSampler::interval_events() const { return impl_->uncore_events(); }
const std::vector<uint64_t>& PerfSampler::periods() const { return impl_->periods; }

std::string PerfSampler::describe() const {
  std::string text = "perf ring buffers of " + std::to_string(impl_->ring_kb) + " KB on " +
                     std::to_string(impl_->threads) +
                     " thread(s), read after each recorded call (and as one passes half full)";
  const std::vector<std::string>& missed = impl_->not_sampled;
  if (missed.empty()) return text;
  text += "; " + std::to_string(missed.size()) + " thread(s) not sampled, their ops' samples missing: " + missed[0];
  if (missed.size() > 1) text += " (and " + std::to_string(missed.size() - 1) + " more)";
  return text;
}

void PerfSampler::enable() const {
  if (impl_->enabled) return;
  impl_->enabled = true;
  if (impl_->reader.joinable()) {
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      if (impl_->uncore_events() > 0) impl_->take_snapshot();  // the first interval starts now
      impl_->reading = true;
    }
    impl_->signal();
  }
  for (const Impl::Fd& f : impl_->fds) ::ioctl(f.fd.get(), PERF_EVENT_IOC_ENABLE, 0);
}

void PerfSampler::add_threads(const std::vector<int>& tids) const {
  Impl& m = *impl_;
  if (m.events == 0 || m.fds.empty()) return;  // nothing samples: forward()'s own thread could not
  const size_t before = m.fds.size();
  {
    std::lock_guard<std::mutex> lock(m.mutex);  // the reader walks the rings
    std::vector<int> fresh;
    for (int tid : tids)
      if (!m.seen.count(tid)) fresh.push_back(tid);
    m.open_threads(fresh, false);
  }
  if (m.fds.size() > before) m.signal();  // their rings polled too
  if (m.enabled)
    for (size_t k = before; k < m.fds.size(); ++k) ::ioctl(m.fds[k].fd.get(), PERF_EVENT_IOC_ENABLE, 0);
}

void PerfSampler::disable() const {
  if (!impl_->enabled) return;
  impl_->enabled = false;
  for (const Impl::Fd& f : impl_->fds) ::ioctl(f.fd.get(), PERF_EVENT_IOC_DISABLE, 0);
  if (impl_->reader.joinable()) {
    {
      std::lock_guard<std::mutex> lock(impl_->mutex);
      if (impl_->reading && impl_->uncore_events() > 0) impl_->take_snapshot();  // the last interval ends now
      impl_->reading = false;
    }
    impl_->signal();
  }
}

void PerfSampler::drain(SamplerDrain& out) const {
  out.samples.clear();
  out.lost.assign(impl_->events, 0);
  out.enabled_ns.assign(impl_->events, 0);
  out.running_ns.assign(impl_->events, 0);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  out.samples.swap(impl_->staged);  // what the reader took off the rings, in order, then the rest
  for (size_t k = 0; k < impl_->staged_lost.size() && k < out.lost.size(); ++k) out.lost[k] = impl_->staged_lost[k];
  impl_->staged_lost.assign(impl_->events, 0);
  for (const auto& ring : impl_->rings) impl_->drain_ring(*ring, out.samples, out.lost);
  out.intervals.clear();
  if (impl_->uncore_events() > 0) {
    const auto& snaps = impl_->snapshots;
    for (size_t i = 0; i < snaps.size(); ++i) {
      IntervalReading r;
      r.time_ns = snaps[i].first;
      // The first reading since enable() opens the first interval; later ones close one.
      const std::vector<uint64_t>* from = i > 0 ? &snaps[i - 1].second : impl_->drained.empty() ? nullptr : &impl_->drained;
      if (from) {
        const auto values = counter_delta(from->data(), snaps[i].second.data(), impl_->uncore->groups(),
                                          impl_->uncore->events());
        for (const CounterValue& v : values) {
          r.delta.push_back(v.scaled);
          r.multiplexed = r.multiplexed || v.multiplexed;
        }
      } else {
        r.delta.assign(impl_->uncore->events(), 0.0);
      }
      out.intervals.push_back(std::move(r));
    }
    if (!snaps.empty()) impl_->drained = snaps.back().second;
    if (!impl_->enabled) impl_->drained.clear();  // enable() starts afresh
    impl_->snapshots.clear();
  }
  for (Impl::Fd& f : impl_->fds) {
    if (!f.multiplexes) continue;  // running all the time it is enabled: no scale to take
    uint64_t v[3];  // value, time_enabled, time_running
    if (::read(f.fd.get(), v, sizeof v) != static_cast<ssize_t>(sizeof v)) continue;
    out.enabled_ns[f.counter] += v[1] - std::min(v[1], f.enabled);
    out.running_ns[f.counter] += v[2] - std::min(v[2], f.running);
    f.enabled = v[1];
    f.running = v[2];
  }
}

PerfSampler PerfSampler::create(const std::vector<std::string>& events, const std::vector<int>& tids,
                                const BandwidthEvents& bandwidth, const SamplingOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->interval = std::chrono::nanoseconds(std::max<int64_t>(options.interval_ns, 10000));
  impl->clock_period_ns = std::max<uint64_t>(options.clock_period_ns, 10000);
  impl->add_interval_events(bandwidth);
  impl->usable = impl->probe_events(events, tids);
  impl->open_threads(tids, true);
  impl->append_interval_statuses();
  impl->start_reader();
  return PerfSampler(std::move(impl));
}

}  // namespace layoutprof
