// libpfm4 + perf_event_open. The only file that includes their headers.
#include <asm/unistd.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "counters/perf_events.h"
#include "counters/perf_permissions.h"
#include "counters/counters.h"
#include "support/errors.h"

namespace layoutprof {

namespace perf_detail {

// libpfm4 is initialised once per process.
bool pfm_ready(std::string* why) {
  static const int status = pfm_initialize();
  if (status != PFM_SUCCESS && why) *why = std::string("libpfm4: ") + pfm_strerror(status);
  return status == PFM_SUCCESS;
}

int paranoid_level() {
  const int level = read_paranoid_level();
  return level == -9 ? 2 : level;  // unreadable: the usual default
}

// Why an event could not be opened, in words a user can act on.
std::string open_failure(int err) {
  std::string text = std::strerror(err);
  switch (err) {
    case ENOENT:
    case EOPNOTSUPP:
      return text + ": this machine exposes no PMU for it (usual in VMs and containers)";
    case EACCES:
    case EPERM:
      return permission_failure(err, read_permissions());
    case ESRCH:
      return text + ": the thread exited";
    default:
      return text;
  }
}

Encoded encode_event(const std::string& event) {
  std::string why;
  if (!pfm_ready(&why)) throw std::runtime_error(why);
  Encoded e;
  std::memset(&e.attr, 0, sizeof e.attr);
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof arg);
  arg.attr = &e.attr;
  arg.size = sizeof arg;
  char* fstr = nullptr;
  arg.fstr = &fstr;
  // User and kernel time: page faults and TLB walks are partly kernel work.
  int status = pfm_get_os_event_encoding(event.c_str(), PFM_PLM0 | PFM_PLM3,
                                         PFM_OS_PERF_EVENT_EXT, &arg);
  if (status != PFM_SUCCESS)
    throw std::runtime_error("libpfm4 does not know '" + bounded(event) + "': " + pfm_strerror(status));
  e.name = fstr ? fstr : event;
  free(fstr);
  e.attr.size = sizeof(perf_event_attr);
  return e;
}

bool is_clock_event(const Encoded& e) {
  return e.attr.type == PERF_TYPE_SOFTWARE &&
         (e.attr.config == PERF_COUNT_SW_TASK_CLOCK || e.attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

EventFd open_event(perf_event_attr& attr, int pid, int cpu, int group_fd) {
  return EventFd(static_cast<int>(syscall(__NR_perf_event_open, &attr, pid, cpu, group_fd, 0)));
}

EventFd open_probe(perf_event_attr& attr, int pid, int cpu, std::string& note) {
  perf_event_attr attempt = attr;
  EventFd fd = open_event(attempt, pid, cpu, -1);
  if (!fd && (errno == EACCES || errno == EPERM) && !attr.exclude_kernel) {
    // perf_event_paranoid 2 (the usual default) allows user space only: take that, and say so.
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attempt = attr;
    fd = open_event(attempt, pid, cpu, -1);
    if (fd)
      note = "user space only, kernel time left out of the counts: perf_event_paranoid " +
             std::to_string(paranoid_level()) + " without CAP_PERFMON";
  }
  return fd;
}

}  // namespace perf_detail

using namespace perf_detail;

namespace {

// The mmapped control page of an event, for rdpmc.
struct MappedPage {
  void* page = MAP_FAILED;
  ~MappedPage() {
    if (page != MAP_FAILED) munmap(page, sysconf(_SC_PAGESIZE));
  }
};

}  // namespace

struct PerfCounters::Impl {
  std::vector<CounterStatus> status;
  std::vector<CounterGroupLayout> layout;
  std::vector<std::vector<EventFd>> fds;  // per group; fds[g][0] leads the group
  std::vector<int> group_pid;         // the thread each group counts (-1: system-wide)
  size_t events = 0;
  size_t snapshot = 0;
  // rdpmc for the calling (main) thread's group, where every event allows it.
  int self_group = -1;
  std::vector<std::unique_ptr<MappedPage>> pages;
  bool rdpmc = false;

  void read_group(size_t g, uint64_t* out) const {
    const size_t n = layout[g].events;
    uint64_t buf[3 + 64];  // {nr, time_enabled, time_running, value[nr]}
    ssize_t got = ::read(fds[g][0].get(), buf, (3 + n) * sizeof(uint64_t));
    if (got < static_cast<ssize_t>((3 + n) * sizeof(uint64_t))) {
      std::fill(out, out + 2 + n, 0);
      out[0] = kFailedRead;  // counter_delta leaves this group out and flags the values
      return;
    }
    std::copy(buf + 1, buf + 3 + n, out);
  }

  // Self-monitoring read through the mmapped pages (perf_event_open(2), "rdpmc").
  bool read_rdpmc(uint64_t* out) const {
    uint64_t enabled = 0, running = 0;
    for (size_t e = 0; e < pages.size(); ++e) {
      auto* pc = static_cast<volatile perf_event_mmap_page*>(pages[e]->page);
      const bool last = e + 1 == pages.size();  // the group's times: read once, with its last event
      uint32_t seq;
      uint64_t count;
      do {
        seq = pc->lock;
        __sync_synchronize();
        uint32_t index = pc->index;
        if (!pc->cap_user_rdpmc || index == 0) return false;
        count = pc->offset;
        uint32_t lo, hi;
        __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(index - 1));
        int64_t pmc = static_cast<int64_t>((static_cast<uint64_t>(hi) << 32) | lo);
        pmc = static_cast<int64_t>(static_cast<uint64_t>(pmc) << (64 - pc->pmc_width)) >>
              (64 - pc->pmc_width);
        count += static_cast<uint64_t>(pmc);
        if (last) {
          enabled = pc->time_enabled;
          running = pc->time_running;
        }
        if (last && pc->cap_user_time) {
          // The page's times stop at the last context switch: add the time since, from the TSC
          // (perf_event_open(2), "cap_user_time").
          uint64_t cyc = __rdtsc();
          uint64_t quot = cyc >> pc->time_shift;
          uint64_t rem = cyc & ((uint64_t{1} << pc->time_shift) - 1);
          uint64_t delta = pc->time_offset + quot * pc->time_mult + ((rem * pc->time_mult) >> pc->time_shift);
          enabled += delta;
          running += delta;
        }
        __sync_synchronize();
      } while (pc->lock != seq);
      out[2 + e] = count;
    }
    out[0] = enabled;
    out[1] = running;
    return true;
  }

  // Opens one group of `events` per target, recording in the statuses what could not be opened.
  // Targets are threads (pid = tid, cpu = -1) or sockets (pid = -1, cpu = first cpu).
  void open_groups(const std::vector<Encoded>& events, size_t first_status,
                   const std::vector<std::pair<int, int>>& targets) {
    if (events.empty()) return;
    if (events.size() > 64) throw UsageError("at most 64 counter events at once");
    size_t first_event = this->events;
    bool first = true;
    for (auto [pid, cpu] : targets) {
      std::vector<EventFd> group;
      int failed_errno = 0;
      for (const Encoded& e : events) {
        perf_event_attr attr = e.attr;
        attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                           PERF_FORMAT_TOTAL_TIME_RUNNING;
        attr.disabled = 0;
        EventFd fd = open_event(attr, pid, cpu, group.empty() ? -1 : group.front().get());
        if (!fd) {
          failed_errno = errno;
          break;
        }
        group.push_back(std::move(fd));
      }
      if (failed_errno) {
        if (first) {  // the events open alone but not as one group: count none of them
          for (size_t k = first_status; k < status.size(); ++k)
            if (status[k].measured &&
                std::any_of(events.begin(), events.end(),
                            [&](const Encoded& e) { return e.name == status[k].encoding; })) {
              status[k].measured = false;
              status[k].reason = "its group could not be opened: " + open_failure(failed_errno);
            }
          return;
        }
        continue;  // a thread that exited since it was listed
      }
      first = false;
      layout.push_back({first_event, events.size()});
      snapshot += 2 + events.size();
      fds.push_back(std::move(group));
      group_pid.push_back(pid);
    }
    if (!first) this->events += events.size();
  }
};

PerfCounters::PerfCounters(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PerfCounters::PerfCounters(PerfCounters&&) noexcept = default;
PerfCounters& PerfCounters::operator=(PerfCounters&&) noexcept = default;
PerfCounters::~PerfCounters() = default;

const std::vector<CounterStatus>& PerfCounters::status() const { return impl_->status; }
size_t PerfCounters::events() const { return impl_->events; }
const std::vector<CounterGroupLayout>& PerfCounters::groups() const { return impl_->layout; }
size_t PerfCounters::snapshot_size() const { return impl_->snapshot; }
std::string PerfCounters::read_method() const { return impl_->rdpmc ? "rdpmc" : "read()"; }

std::vector<std::string> PerfCounters::default_events() {
  return {"perf::PERF_COUNT_HW_CACHE_DTLB:READ:MISS", "perf::PERF_COUNT_HW_CACHE_DTLB:WRITE:MISS",
          "perf::PERF_COUNT_HW_CACHE_LL:READ:MISS",   "cycles",
          "instructions",                              "page-faults",
          "task-clock"};
}

std::string PerfCounters::encode(const std::string& event) { return encode_event(event).name; }

namespace {

// Encodes each event and tries it alone on one target: a failure here is the event's own
// (unknown name, no PMU, paranoid level), not the group's.
std::vector<Encoded> usable_events(const std::vector<std::string>& names, int pid, int cpu,
                                   CounterScope scope, std::vector<CounterStatus>& status) {
  std::vector<Encoded> usable;
  for (const std::string& name : names) {
    CounterStatus st;
    st.event = name;
    st.scope = scope;
    try {
      Encoded e = encode_event(name);
      st.encoding = e.name;
      if (!open_probe(e.attr, pid, cpu, st.note)) {  // the probe's fd is closed at once
        st.reason = open_failure(errno);
      } else {
        st.measured = true;
        usable.push_back(e);
      }
    } catch (const std::exception& ex) {
      st.reason = ex.what();
    }
    status.push_back(st);
  }
  return usable;
}

}  // namespace

namespace {


// Orders the statuses of `usable` events as their values will come: the shared group's
// events, then the clock events; events not measured keep their place after them.
void order_statuses(std::vector<CounterStatus>& status, size_t first,
                    const std::vector<Encoded>& shared, const std::vector<Encoded>& clocks) {
  std::vector<CounterStatus> ordered, rest;
  for (const auto* list : {&shared, &clocks})
    for (const Encoded& e : *list)
      for (size_t k = first; k < status.size(); ++k)
        if (status[k].measured && status[k].encoding == e.name) {
          ordered.push_back(status[k]);
          break;
        }
  for (size_t k = first; k < status.size(); ++k)
    if (!status[k].measured) rest.push_back(status[k]);
  status.resize(first);
  status.insert(status.end(), ordered.begin(), ordered.end());
  status.insert(status.end(), rest.begin(), rest.end());
}

}  // namespace

PerfCounters PerfCounters::create(const std::vector<std::string>& events,
                                  const std::vector<int>& tids, const BandwidthEvents& bandwidth) {
  auto impl = std::make_unique<Impl>();
  if (!tids.empty()) {
    std::vector<Encoded> usable = usable_events(events, tids.front(), -1, CounterScope::thread, impl->status);
    std::vector<Encoded> shared, clocks;
    // Software clock events (task-clock, cpu-clock) advance only when read as a group's
    // leader, so each gets a group of its own.
    for (const Encoded& e : usable) (is_clock_event(e) ? clocks : shared).push_back(e);
    order_statuses(impl->status, 0, shared, clocks);
    std::vector<std::pair<int, int>> targets;
    for (int tid : tids) targets.emplace_back(tid, -1);
    impl->open_groups(shared, 0, targets);
    for (const Encoded& clock : clocks) impl->open_groups({clock}, 0, targets);
  } else {
    for (const std::string& name : events)
    {
      CounterStatus st;
      st.event = name;
      st.reason = "no thread to count on";
      impl->status.push_back(st);
    }
  }
  if (!bandwidth.events.empty() && !bandwidth.cpus.empty()) {
    size_t first_status = impl->status.size();
    std::vector<Encoded> usable =
        usable_events(bandwidth.events, -1, bandwidth.cpus.front(), CounterScope::system, impl->status);
    std::vector<std::pair<int, int>> targets;
    for (int cpu : bandwidth.cpus) targets.emplace_back(-1, cpu);
    // The kernel groups hardware events of one PMU only: one group per memory controller.
    std::map<uint32_t, std::vector<Encoded>> by_pmu;
    for (const Encoded& e : usable) by_pmu[e.attr.type].push_back(e);
    std::vector<Encoded> ordered;
    for (const auto& [type, events] : by_pmu) ordered.insert(ordered.end(), events.begin(), events.end());
    std::vector<Encoded> none;
    order_statuses(impl->status, first_status, ordered, none);
    for (const auto& [type, events] : by_pmu) impl->open_groups(events, first_status, targets);
  }

  // rdpmc on the calling thread's shared group, where the kernel allows it for every event.
  int self = static_cast<int>(syscall(__NR_gettid));
  for (size_t g = 0; g < impl->fds.size(); ++g)
    if (impl->group_pid[g] == self && impl->layout[g].first_event == 0) {
      impl->self_group = static_cast<int>(g);
      break;
    }
  if (impl->self_group >= 0) {
    bool all = true;
    for (const EventFd& fd : impl->fds[impl->self_group]) {
      auto page = std::make_unique<MappedPage>();
      page->page = mmap(nullptr, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd.get(), 0);
      if (page->page == MAP_FAILED) {
        all = false;
        break;
      }
      auto* pc = static_cast<perf_event_mmap_page*>(page->page);
      all = all && pc->cap_user_rdpmc && pc->index != 0;
      impl->pages.push_back(std::move(page));
    }
    impl->rdpmc = all;
    if (!all) impl->pages.clear();
  }
  return PerfCounters(std::move(impl));
}

void PerfCounters::read(uint64_t* snapshot) const {
  uint64_t* out = snapshot;
  for (size_t g = 0; g < impl_->fds.size(); ++g) {
    if (!(impl_->rdpmc && static_cast<int>(g) == impl_->self_group && impl_->read_rdpmc(out)))
      impl_->read_group(g, out);
    out += 2 + impl_->layout[g].events;
  }
}

namespace {

// The PMUs libpfm4 finds on this machine.
std::vector<pfm_pmu_info_t> present_pmus() {
  std::vector<pfm_pmu_info_t> pmus;
  for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; ++p) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(p), &info) == PFM_SUCCESS && info.is_present)
      pmus.push_back(info);
  }
  return pmus;
}

}  // namespace

namespace {

// The first CPU of each socket.
std::vector<int> first_cpu_of_each_socket() {
  std::map<int, int> first_cpu;
  for (int cpu = 0;; ++cpu) {
    std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/physical_package_id");
    if (!in) break;
    int package = 0;
    in >> package;
    first_cpu.emplace(package, cpu);
  }
  std::vector<int> cpus;
  for (auto [package, cpu] : first_cpu) cpus.push_back(cpu);
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

}  // namespace

BandwidthEvents PerfCounters::bandwidth_events(const std::vector<std::string>& chosen) {
  BandwidthEvents bw;
  if (!chosen.empty()) {
    bw.events = chosen;
    bw.cpus = first_cpu_of_each_socket();
    bw.note = "--bandwidth-events, system-wide on " + std::to_string(bw.cpus.size()) +
              " socket(s), 64 bytes a count";
    return bw;
  }
  std::string why;
  if (!pfm_ready(&why)) {
    bw.note = why;
    return bw;
  }
  std::string present;
  for (const pfm_pmu_info_t& info : present_pmus()) {
    std::string name = info.name;
    present += (present.empty() ? "" : ", ") + name;
    // Intel's integrated memory controllers (snbep_unc_imc0, skx_unc_imc0, ...).
    if (info.type != PFM_PMU_TYPE_UNCORE || name.find("unc_imc") == std::string::npos) continue;
    for (const char* ev : {"UNC_M_CAS_COUNT:RD", "UNC_M_CAS_COUNT:WR"}) {
      std::string full = name + "::" + ev;
      try {
        encode_event(full);
        bw.events.push_back(full);
      } catch (const std::exception&) {
      }
    }
  }
  if (bw.events.empty()) {
    bw.note = "libpfm4 finds no uncore memory-controller PMU here (PMUs present: " +
              (present.empty() ? std::string("none") : present) + ")";
    return bw;
  }
  bw.cpus = first_cpu_of_each_socket();
  bw.note = "uncore memory-controller CAS counts, system-wide on " +
            std::to_string(bw.cpus.size()) + " socket(s)";
  return bw;
}

std::string PerfCounters::list_events() {
  std::string why;
  if (!pfm_ready(&why)) throw std::runtime_error(why);
  std::ostringstream out;
  for (const pfm_pmu_info_t& pinfo : present_pmus()) {
    out << "# " << pinfo.name << ": " << pinfo.desc << " (" << pinfo.nevents << " events)\n";
    for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
      pfm_event_info_t einfo;
      std::memset(&einfo, 0, sizeof einfo);
      einfo.size = sizeof einfo;
      if (pfm_get_event_info(i, PFM_OS_PERF_EVENT_EXT, &einfo) != PFM_SUCCESS) continue;
      out << pinfo.name << "::" << einfo.name;
      if (einfo.desc) {
        std::string desc = einfo.desc;
        out << "  " << desc.substr(0, desc.find('\n'));
      }
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace layoutprof
