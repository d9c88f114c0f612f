#include "counters/counters.h"
#include "counters/perf_permissions.h"
#include "counters/process_threads.h"

#include <sys/mman.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <chrono>
#include <cstring>
#include <memory>

namespace layoutprof {
namespace {

using ::testing::HasSubstr;

int self_tid() { return static_cast<int>(syscall(SYS_gettid)); }

TEST(CounterDelta, SumsGroupsAndScalesMultiplexedOnes) {
  // Two groups of two events: {enabled, running, a, b} each.
  std::vector<CounterGroupLayout> groups = {{0, 2}, {0, 2}};
  uint64_t begin[] = {100, 100, 10, 20, 0, 0, 5, 5};
  uint64_t end[] = {200, 200, 15, 40, 100, 50, 25, 5};  // second group ran half the time
  auto d = counter_delta(begin, end, groups, 2);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].raw, 5u + 20u);
  EXPECT_DOUBLE_EQ(d[0].scaled, 5.0 + 20.0 * 2.0);
  EXPECT_TRUE(d[0].multiplexed);
  EXPECT_EQ(d[1].raw, 20u);
  EXPECT_DOUBLE_EQ(d[1].scaled, 20.0);
}

TEST(CounterDelta, GroupsFillTheirOwnEvents) {
  // A thread group with event 0, and a clock group with event 1.
  std::vector<CounterGroupLayout> groups = {{0, 1}, {1, 1}};
  uint64_t begin[] = {0, 0, 1, 0, 0, 1000};
  uint64_t end[] = {10, 10, 4, 10, 10, 3000};
  auto d = counter_delta(begin, end, groups, 2);
  EXPECT_EQ(d[0].raw, 3u);
  EXPECT_EQ(d[1].raw, 2000u);
  EXPECT_FALSE(d[0].multiplexed);
  EXPECT_FALSE(d[1].multiplexed);
}

TEST(CounterDelta, AGroupThatNeverRanCountsNothingAndSaysSo) {
  std::vector<CounterGroupLayout> groups = {{0, 1}};
  uint64_t begin[] = {0, 0, 0};
  uint64_t end[] = {100, 0, 0};
  auto d = counter_delta(begin, end, groups, 1);
  EXPECT_EQ(d[0].raw, 0u);
  EXPECT_TRUE(d[0].multiplexed);
}

TEST(CounterDelta, FailedReadsAreLeftOutAndFlagged) {
  std::vector<CounterGroupLayout> groups = {{0, 1}, {0, 1}};
  uint64_t begin[] = {0, 0, 10, kFailedRead, 0, 0};
  uint64_t end[] = {50, 50, 15, 100, 100, 999};
  auto d = counter_delta(begin, end, groups, 1);
  EXPECT_EQ(d[0].raw, 5u) << "only the group that read well";
  EXPECT_TRUE(d[0].multiplexed) << "flagged: part of the count is missing";
}

TEST(CounterDelta, NoTimeOnTheClocksMeansNoScaling) {
  // rdpmc snapshots in one time slice can carry equal times: the count stands as it is.
  std::vector<CounterGroupLayout> groups = {{0, 1}};
  uint64_t begin[] = {500, 500, 7};
  uint64_t end[] = {500, 500, 19};
  auto d = counter_delta(begin, end, groups, 1);
  EXPECT_EQ(d[0].raw, 12u);
  EXPECT_DOUBLE_EQ(d[0].scaled, 12.0);
  EXPECT_FALSE(d[0].multiplexed);
}

TEST(PerfCounters, EncodesNamesWithoutAPmu) {
  // libpfm4 knows the generic events whether or not the kernel exposes a PMU.
  EXPECT_THAT(PerfCounters::encode("cycles"), HasSubstr("PERF_COUNT_HW_CPU_CYCLES"));
  EXPECT_THAT(PerfCounters::encode("page-faults"), HasSubstr("PERF_COUNT_SW_PAGE_FAULTS"));
  EXPECT_THAT(PerfCounters::encode("perf::PERF_COUNT_HW_CACHE_DTLB:READ:MISS"),
              HasSubstr("DTLB:READ:MISS"));
  try {
    PerfCounters::encode("bogus::event");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("libpfm4 does not know 'bogus::event'"));
    EXPECT_THAT(e.what(), HasSubstr("event not found"));
  }
}

TEST(PerfCounters, UnknownEventsAreReportedNotDropped) {
  auto pc = PerfCounters::create({"bogus::event", "page-faults"}, {self_tid()});
  ASSERT_EQ(pc.status().size(), 2u);
  const CounterStatus* bogus = nullptr;
  for (const auto& s : pc.status())
    if (s.event == "bogus::event") bogus = &s;
  ASSERT_TRUE(bogus);
  EXPECT_FALSE(bogus->measured);
  EXPECT_THAT(bogus->reason, HasSubstr("does not know"));
}

TEST(PerfCounters, NoThreadsMeansNothingMeasuredWithAReason) {
  auto pc = PerfCounters::create({"page-faults"}, {});
  ASSERT_EQ(pc.status().size(), 1u);
  EXPECT_FALSE(pc.status()[0].measured);
  EXPECT_FALSE(pc.status()[0].reason.empty());
  EXPECT_EQ(pc.events(), 0u);
}

TEST(PerfCounters, SoftwareEventsCountRealWork) {
  auto pc = PerfCounters::create({"page-faults", "task-clock"}, {self_tid()});
  if (pc.events() < 2) GTEST_SKIP() << "software events unavailable: " << pc.status()[0].reason;
  std::vector<uint64_t> a(pc.snapshot_size()), b(pc.snapshot_size());
  pc.read(a.data());
  // Fresh pages straight from the kernel (the heap may hand back pages an earlier test touched):
  // their first touch page-faults.
  const size_t bytes = 16 << 20;
  void* fresh = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(fresh, MAP_FAILED);
  std::memset(fresh, 1, bytes);
  pc.read(b.data());
  ::munmap(fresh, bytes);
  auto d = counter_delta(a.data(), b.data(), pc.groups(), pc.events());
  // Values come in status() order of the measured events.
  for (size_t k = 0; k < pc.status().size(); ++k) {
    const auto& st = pc.status()[k];
    if (st.event == "page-faults") { EXPECT_GT(d[k].raw, 0u); }
    if (st.event == "task-clock") { EXPECT_GT(d[k].raw, 100000u) << "task-clock in ns"; }
  }
  EXPECT_EQ(pc.read_method(), "read()") << "software events have no rdpmc index";
}

TEST(PerfCounters, HardwareEventsWhereThePmuAllows) {
  auto pc = PerfCounters::create({"cycles", "instructions"}, {self_tid()});
  if (pc.events() == 0)
    GTEST_SKIP() << "no hardware PMU here: " << pc.status()[0].reason;
  std::vector<uint64_t> a(pc.snapshot_size()), b(pc.snapshot_size());
  pc.read(a.data());
  volatile double x = 0;
  for (int i = 0; i < 1000000; ++i) x = x + 1;
  pc.read(b.data());
  auto d = counter_delta(a.data(), b.data(), pc.groups(), pc.events());
  EXPECT_GT(d[0].scaled, 1e5);
  EXPECT_GT(d[1].scaled, 1e6);
}

TEST(PerfCounters, DefaultSetNamesTheMissionsEvents) {
  auto events = PerfCounters::default_events();
  auto has = [&](const std::string& e) { return std::find(events.begin(), events.end(), e) != events.end(); };
  EXPECT_TRUE(has("perf::PERF_COUNT_HW_CACHE_DTLB:READ:MISS"));
  EXPECT_TRUE(has("perf::PERF_COUNT_HW_CACHE_DTLB:WRITE:MISS"));
  EXPECT_TRUE(has("page-faults"));
  EXPECT_TRUE(has("task-clock"));
}

TEST(PerfCounters, ListsThisMachinesPmus) {
  std::string list = PerfCounters::list_events();
  EXPECT_THAT(list, HasSubstr("# perf: "));
  EXPECT_THAT(list, HasSubstr("perf::PERF_COUNT_SW_PAGE_FAULTS"));
}

TEST(PerfCounters, BandwidthEventsSayWhyWhenAbsent) {
  BandwidthEvents bw = PerfCounters::bandwidth_events();
  if (bw.events.empty()) {
    EXPECT_THAT(bw.note, HasSubstr("no uncore memory-controller PMU"));
  } else {
    EXPECT_FALSE(bw.cpus.empty());
    EXPECT_THAT(bw.events[0], HasSubstr("UNC_M_CAS_COUNT"));
  }
}

// /proc/self/status as Docker's default container shows it (a seccomp filter, root's uid and no
// CAP_PERFMON or CAP_SYS_ADMIN), and as a process with CAP_PERFMON shows it.
constexpr const char* kContainerStatus = "Name:\tpython3\nUid:\t0\t0\t0\t0\nCapEff:\t00000000a80425fb\nSeccomp:\t2\n";
constexpr const char* kPerfmonStatus = "Name:\tlayoutprof\nCapEff:\t0000004000000000\nSeccomp:\t0\n";

TEST(PerfPermissions, ReadsSeccompAndTheCapabilitiesFromTheProcessStatus) {
  const PerfPermissions container = parse_permissions(kContainerStatus, 2);
  EXPECT_EQ(container.seccomp, 2);
  EXPECT_FALSE(container.cap_perfmon);
  EXPECT_FALSE(container.cap_sys_admin) << "root's uid is not CAP_SYS_ADMIN";
  const PerfPermissions perfmon = parse_permissions(kPerfmonStatus, 3);
  EXPECT_TRUE(perfmon.cap_perfmon);
  EXPECT_EQ(perfmon.seccomp, 0);
  EXPECT_EQ(parse_permissions("Name:\tx\n", 2).seccomp, -1) << "a kernel that does not say";
}

TEST(PerfPermissions, EachRefusalSaysWhatWouldChangeIt) {
  const PerfPermissions container = parse_permissions(kContainerStatus, 2);
  EXPECT_THAT(permission_failure(EPERM, container), HasSubstr("a seccomp filter refuses perf_event_open"));
  EXPECT_THAT(permission_failure(EPERM, container), HasSubstr("--cap-add PERFMON"));
  // EACCES is the paranoid level's or the capabilities', not seccomp's.
  EXPECT_THAT(permission_failure(EACCES, container), HasSubstr("perf_event_paranoid is 2"));
  EXPECT_THAT(permission_failure(EACCES, container), HasSubstr("neither CAP_PERFMON nor CAP_SYS_ADMIN"));
  PerfPermissions debian = parse_permissions("Seccomp:\t0\nCapEff:\t0000000000000000\n", 3);
  EXPECT_THAT(permission_failure(EACCES, debian), HasSubstr("Debian's kernels refuse every perf_event_open"));
  EXPECT_THAT(permission_failure(EACCES, parse_permissions("", -9)), HasSubstr("could not be read"));
}

TEST(ProcessThreads, IncludesTheCallingThread) {
  auto tids = process_threads();
  EXPECT_NE(std::find(tids.begin(), tids.end(), self_tid()), tids.end());
}

// A look before each call lists the threads again only when one started or ended (or the
// recheck time passed): a thread started between two looks is in the second.
TEST(ProcessThreads, ALookListsThemAgainOnlyWhenTheyChanged) {
  ThreadLook look(std::chrono::hours(1));
  ASSERT_TRUE(look.changed().has_value()) << "the first look lists them";
  EXPECT_FALSE(look.changed().has_value()) << "nothing started since";
  std::atomic<int> started{0};
  std::atomic<bool> stop{false};
  std::thread t([&] {
    started = self_tid();
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (started == 0) std::this_thread::yield();
  const auto again = look.changed();
  stop = true;
  t.join();
  ASSERT_TRUE(again.has_value()) << "a thread started: listed again";
  EXPECT_NE(std::find(again->begin(), again->end(), started.load()), again->end());
  EXPECT_TRUE(look.changed().has_value()) << "it ended: listed again";
  ThreadLook soon(std::chrono::milliseconds(0));
  soon.changed();
  EXPECT_TRUE(soon.changed().has_value()) << "past the recheck time, listed whatever the count";
}

}  // namespace
}  // namespace layoutprof
