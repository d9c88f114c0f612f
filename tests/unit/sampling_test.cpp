#include "counters/sampling.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <numeric>
#include <random>
#include <thread>

#include "counters/counters.h"
#include "counters/process_threads.h"

namespace layoutprof {
namespace {

using ::testing::HasSubstr;

// A counted span's samples per counter, as a vector (empty for a span not counted).
std::vector<uint64_t> counts_of(const SampleAttribution& a, size_t span) {
  const uint64_t* at = a.counted(span);
  return at ? std::vector<uint64_t>(at, at + a.counters) : std::vector<uint64_t>{};
}

SampleSpan span(int64_t start, int64_t end, int32_t parent, uint32_t thread, bool counted) {
  SampleSpan s;
  s.start_ns = start;
  s.end_ns = end;
  s.parent = parent;
  s.thread = thread;
  s.counted = counted;
  return s;
}

Sample sample(int64_t t, int32_t thread = 0, uint32_t counter = 0, uint64_t addr = 0) {
  Sample s;
  s.time_ns = t;
  s.thread = thread;
  s.counter = counter;
  s.addr = addr;
  return s;
}

// A top-level op [0, 100] holding a copy_ [20, 40] holding a kernel op [25, 30]; a second
// top-level op [200, 300]; a pool thread's op [50, 90] inside the first.
std::vector<SampleSpan> call_spans() {
  return {span(0, 100, -1, 0, true), span(20, 40, 0, 0, true), span(25, 30, 1, 0, false),
          span(50, 90, -1, 1, false), span(200, 300, -1, 0, true)};
}

TEST(AttributeSamples, ChargesEveryCountedOpAroundTheSampleAsACountingReadWould) {
  const auto spans = call_spans();
  std::vector<Sample> samples = {sample(10), sample(27), sample(35), sample(150), sample(250), sample(300)};
  SampleAttribution a = attribute_samples(spans, samples, 1);
  EXPECT_EQ(counts_of(a, 0), std::vector<uint64_t>{3}) << "10, 27 and 35 fall in the first top-level op";
  EXPECT_EQ(counts_of(a, 1), std::vector<uint64_t>{2}) << "27 and 35 in the copy, nested in it";
  EXPECT_TRUE(a.counted(2) == nullptr) << "an op that is not counted gets no counters";
  EXPECT_EQ(counts_of(a, 4), std::vector<uint64_t>{2}) << "250, and 300 at its very end";
  EXPECT_EQ(a.unattributed, std::vector<uint64_t>{1}) << "150 ran between the ops";
  EXPECT_EQ(a.innermost, (std::vector<int32_t>{0, 2, 1, -1, 4, 4}));
}

TEST(AttributeSamples, OtherThreadsSamplesGoToForwardsThreadOpAndTheirOwnInnermost) {
  const auto spans = call_spans();
  // On the pool thread inside its op; on the pool thread outside it (a kernel's chunk that
  // recorded nothing); on a thread the recorder never saw.
  std::vector<Sample> samples = {sample(60, 1), sample(95, 1), sample(70, -1), sample(150, -1)};
  SampleAttribution a = attribute_samples(spans, samples, 1);
  EXPECT_EQ(counts_of(a, 0), std::vector<uint64_t>{3}) << "all three ran while the first top-level op did";
  EXPECT_EQ(counts_of(a, 1), std::vector<uint64_t>{0});
  EXPECT_EQ(a.innermost, (std::vector<int32_t>{3, 0, 0, -1}));
  EXPECT_EQ(a.unattributed, std::vector<uint64_t>{1});
}

TEST(AttributeSamples, CountersAreKeptApartAndOutOfRangeOnesIgnored) {
  const auto spans = call_spans();
  std::vector<Sample> samples = {sample(10, 0, 0), sample(10, 0, 1), sample(210, 0, 1), sample(210, 0, 7)};
  SampleAttribution a = attribute_samples(spans, samples, 2);
  EXPECT_EQ(counts_of(a, 0), (std::vector<uint64_t>{1, 1}));
  EXPECT_EQ(counts_of(a, 4), (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(a.unattributed, (std::vector<uint64_t>{0, 0}));
}

// Random nested spans on three threads, listed in a shuffled order, against a plain scan of
// every span for each sample.
TEST(AttributeSamples, TheSweepFindsWhatAScanOfEverySpanFinds) {
  std::mt19937_64 rng(7);
  auto below = [&](int64_t n) { return n > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(n)) : 0; };
  for (int round = 0; round < 50; ++round) {
    std::vector<SampleSpan> built;
    for (uint32_t thread = 0; thread < 3; ++thread) {
      std::vector<std::pair<int32_t, int>> todo;  // (span, depth) whose children are to make
      int64_t at = below(50);
      for (int top = 0; top < 4; ++top) {
        const int64_t len = 100 + below(1000);
        built.push_back(span(at, at + len, -1, thread, thread == 0));
        todo.emplace_back(static_cast<int32_t>(built.size() - 1), 0);
        at += len + 1 + below(200);
      }
      while (!todo.empty()) {
        const auto [parent, depth] = todo.back();
        todo.pop_back();
        if (depth > 3) continue;
        int64_t from = built[parent].start_ns + 1;  // children strictly inside their parent
        const int64_t to = built[parent].end_ns - 1;
        for (int c = 0; c < 3 && to - from > 4; ++c) {
          const int64_t s = from + below((to - from) / 2);
          const int64_t e = s + 1 + below(to - s - 1);
          built.push_back(span(s, e, parent, thread, thread == 0 && rng() % 3 == 0));
          todo.emplace_back(static_cast<int32_t>(built.size() - 1), depth + 1);
          from = e + 1;
        }
      }
    }
    std::vector<int32_t> place(built.size());
    std::iota(place.begin(), place.end(), 0);
    std::shuffle(place.begin(), place.end(), rng);
    std::vector<SampleSpan> spans(built.size());
    for (size_t i = 0; i < built.size(); ++i) {
      spans[place[i]] = built[i];
      spans[place[i]].parent = built[i].parent < 0 ? -1 : place[built[i].parent];
    }
    std::vector<Sample> samples;
    for (int k = 0; k < 300; ++k) samples.push_back(sample(below(6000), static_cast<int32_t>(below(4)) - 1));
    auto scan = [&](int64_t t, uint32_t thread) {
      int64_t best = -1;
      for (size_t j = 0; j < spans.size(); ++j)
        if (spans[j].thread == thread && spans[j].start_ns <= t && t <= spans[j].end_ns &&
            (best < 0 || spans[j].end_ns - spans[j].start_ns < spans[best].end_ns - spans[best].start_ns))
          best = static_cast<int64_t>(j);
      return best;
    };
    SampleAttribution a = attribute_samples(spans, samples, 1);
    std::vector<uint64_t> expected(spans.size(), 0);
    uint64_t outside = 0;
    for (size_t k = 0; k < samples.size(); ++k) {
      int64_t want = samples[k].thread > 0 ? scan(samples[k].time_ns, static_cast<uint32_t>(samples[k].thread)) : -1;
      if (want < 0) want = scan(samples[k].time_ns, 0);
      ASSERT_EQ(a.innermost[k], want) << "round " << round << " sample " << k;
      bool charged = false;
      for (size_t j = 0; j < spans.size(); ++j)
        if (spans[j].thread == 0 && spans[j].counted && spans[j].start_ns <= samples[k].time_ns &&
            samples[k].time_ns <= spans[j].end_ns) {
          ++expected[j];
          charged = true;
        }
      if (!charged) ++outside;
    }
    for (size_t j = 0; j < spans.size(); ++j)
      if (spans[j].counted) {
        EXPECT_EQ(a.counted(j)[0], expected[j]) << "round " << round << " span " << j;
      }
    EXPECT_EQ(a.unattributed[0], outside);
  }
}

TensorInfo tensor(uint64_t storage, int64_t offset, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  TensorInfo t;
  t.storage = storage;
  t.storage_offset = offset;
  t.set_shape(std::move(sizes), std::move(strides), "f32", "cpu", 4);
  return t;
}

TEST(TensorHolds, TheBytesFromTheFirstElementToTheLast) {
  const TensorInfo dense = tensor(0x10000, 0, {4, 8}, {8, 1});  // 128 bytes
  EXPECT_TRUE(tensor_holds(dense, 0x10000));
  EXPECT_TRUE(tensor_holds(dense, 0x10000 + 127));
  EXPECT_FALSE(tensor_holds(dense, 0x10000 + 128));
  EXPECT_FALSE(tensor_holds(dense, 0xffff));
  const TensorInfo transposed = tensor(0x10000, 0, {8, 4}, {1, 8});
  EXPECT_TRUE(tensor_holds(transposed, 0x10000 + 127)) << "a view spans its base's bytes";
  const TensorInfo row = tensor(0x10000, 16, {8}, {1});  // the third row: bytes 64..95
  EXPECT_FALSE(tensor_holds(row, 0x10000 + 63));
  EXPECT_TRUE(tensor_holds(row, 0x10000 + 64));
  EXPECT_FALSE(tensor_holds(row, 0x10000 + 96));
  const TensorInfo flipped = tensor(0x10000, 7, {8}, {-1});  // elements 7 down to 0
  EXPECT_TRUE(tensor_holds(flipped, 0x10000));
  EXPECT_FALSE(tensor_holds(flipped, 0x10000 + 32));
  EXPECT_FALSE(tensor_holds(tensor(0, 0, {4}, {1}), 0)) << "no storage";
  EXPECT_FALSE(tensor_holds(tensor(0x10000, 0, {0, 4}, {4, 1}), 0x10000)) << "no elements";
}

TEST(AttributeAddresses, TheInnermostOpWithATensorHoldingTheAddressAndOnlyThat) {
  const auto spans = call_spans();
  std::vector<Sample> samples = {sample(27, 0, 0, 0x5000),   // the kernel op's tensor
                                 sample(27, 0, 0, 0x9000),   // only the copy's (its parent)
                                 sample(60, 1, 0, 0x9000),   // pool thread: its op, then nothing
                                 sample(27, 0, 0, 0x77000),  // in nobody's tensor
                                 sample(27, 0, 0, 0)};       // no address
  SampleAttribution a = attribute_samples(spans, samples, 1);
  auto tensor_at = [](int32_t op, uint64_t addr) -> int {
    if (op == 2 && addr >= 0x5000 && addr < 0x6000) return 0;
    if (op == 1 && addr >= 0x9000 && addr < 0xa000) return 1;
    return -1;
  };
  std::vector<TensorSamples> got = attribute_addresses(spans, samples, a, tensor_at);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].op, 1);
  EXPECT_EQ(got[0].slot, 1);
  EXPECT_EQ(got[0].samples, 1u) << "the pool thread's op holds no such tensor, and it has no parent";
  EXPECT_EQ(got[1].op, 2);
  EXPECT_EQ(got[1].samples, 1u);
}

TEST(SampledEstimate, SamplesTimesPeriodWithPoissonAndPhaseError) {
  EXPECT_DOUBLE_EQ(sampled_estimate(100, 16), 1600.0);
  EXPECT_DOUBLE_EQ(sampled_error(99, 16), 160.0);
  EXPECT_DOUBLE_EQ(sampled_error(0, 250000), 250000.0) << "no sample still leaves up to a period unseen";
  // The mean of 4 calls that took 96 samples in all: a phase per call, the error a quarter.
  EXPECT_DOUBLE_EQ(sampled_error(96, 16, 4), 16.0 * 10.0 / 4.0);
  EXPECT_LT(sampled_error(96, 16, 4), sampled_error(24, 16)) << "four calls' mean is surer than one call";
}

// The kernel's side: page faults of this thread, sampled with their addresses, land in the
// buffer the test touched and nowhere else.
TEST(PerfSampler, PageFaultSamplesCarryTheFaultingAddress) {
  const int tid = static_cast<int>(syscall(SYS_gettid));
  PerfSampler sampler = PerfSampler::create({"page-faults:period=4"}, {tid});
  ASSERT_EQ(sampler.status().size(), 1u);
  if (!sampler.status()[0].measured) GTEST_SKIP() << "page-faults not sampled here: " << sampler.status()[0].reason;
  EXPECT_EQ(sampler.status()[0].mode, CounterMode::sampled);
  EXPECT_EQ(sampler.periods(), std::vector<uint64_t>{4}) << "the period given with the event is kept";
  EXPECT_THAT(sampler.status()[0].data_address, HasSubstr("faulting address"));
  const size_t bytes = 4096 * 256;
  auto* buf = static_cast<unsigned char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(buf, MAP_FAILED);
  const auto t0 = std::chrono::steady_clock::now().time_since_epoch().count();
  sampler.enable();
  std::memset(buf, 1, bytes);  // 256 first touches
  sampler.disable();
  const auto t1 = std::chrono::steady_clock::now().time_since_epoch().count();
  SamplerDrain drain;
  sampler.drain(drain);
  ::munmap(buf, bytes);
  size_t inside = 0;
  for (const RawSample& s : drain.samples) {
    EXPECT_EQ(s.tid, tid);
    EXPECT_GE(s.time_ns, t0) << "samples are on the steady clock's time line";
    EXPECT_LE(s.time_ns, t1);
    inside += s.addr >= reinterpret_cast<uint64_t>(buf) && s.addr < reinterpret_cast<uint64_t>(buf) + bytes;
  }
  EXPECT_GE(drain.samples.size(), 256u / 4 - 1);
  EXPECT_LE(drain.samples.size(), 256u / 4 + 8) << "one every 4 faults, and the test's own few";
  EXPECT_GE(inside, 256u / 4 - 1) << "the faulting addresses are the buffer's";
  EXPECT_EQ(drain.lost, std::vector<uint64_t>{0});
  SamplerDrain again;
  sampler.drain(again);
  EXPECT_TRUE(again.samples.empty()) << "a drain reads each sample once";
}

// A call that fills its thread's ring (1 MB) twice over loses nothing: the kernel wakes the
// sampler's reader as the ring passes half full, and the reader empties it while the call runs.
TEST(PerfSampler, ARingFilledSeveralTimesInOneCallLosesNoSample) {
  const int tid = static_cast<int>(syscall(SYS_gettid));
  PerfSampler sampler = PerfSampler::create({"page-faults:period=1"}, {tid});
  if (!sampler.status()[0].measured) GTEST_SKIP() << "page-faults not sampled here: " << sampler.status()[0].reason;
  const size_t pages = 48 * 1024;  // 48 bytes a sample: 2.3 MB of them
  const size_t bytes = 4096 * pages;
  auto* buf = static_cast<unsigned char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(buf, MAP_FAILED);
  sampler.enable();
  for (size_t p = 0; p < pages; ++p) buf[p * 4096] = 1;  // one fault a page
  sampler.disable();
  SamplerDrain drain;
  sampler.drain(drain);
  ::munmap(buf, bytes);
  EXPECT_EQ(drain.lost, std::vector<uint64_t>{0}) << "the reader kept up";
  EXPECT_GE(drain.samples.size(), pages) << "each first touch, and the test's own few";
  for (size_t k = 1; k < drain.samples.size(); ++k)
    ASSERT_LE(drain.samples[k - 1].time_ns, drain.samples[k].time_ns) << "in order across the reader's takes";
}

// Spins until this thread has run for `cpu` (task-clock counts its CPU time, not the wall's).
static void spin_thread_cpu(std::chrono::nanoseconds cpu) {
  auto thread_ns = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
  };
  const auto until = thread_ns() + cpu;
  volatile uint64_t spin = 0;
  while (thread_ns() < until) spin = spin + 1;
}

TEST(PerfSampler, ClockSamplesAndUnsampleableEventsSayWhy) {
  const int tid = static_cast<int>(syscall(SYS_gettid));
  PerfSampler sampler = PerfSampler::create({"bogus::nothing", "task-clock", "cycles:freq=100"}, {tid});
  ASSERT_EQ(sampler.status().size(), 3u);
  EXPECT_EQ(sampler.status()[0].event, "task-clock") << "measured events come first";
  EXPECT_TRUE(sampler.status()[0].measured) << sampler.status()[0].reason;
  EXPECT_EQ(sampler.status()[0].period, 2000000u) << "the default: 500 samples a second of CPU time";
  for (size_t k = 1; k < 3; ++k) EXPECT_FALSE(sampler.status()[k].measured);
  EXPECT_THAT(sampler.status()[1].reason, HasSubstr("does not know"));
  EXPECT_THAT(sampler.status()[2].reason, ::testing::AnyOf(HasSubstr("fixed period"), HasSubstr("does not know")));
  sampler.enable();
  spin_thread_cpu(std::chrono::milliseconds(30));  // CPU time, not wall time: a busy machine
  sampler.disable();                                // deschedules this thread for long stretches
  SamplerDrain drain;
  sampler.drain(drain);
  // 30 ms of this thread's CPU time at one sample per 2 ms: about 15.
  EXPECT_GE(drain.samples.size(), 3u);
  EXPECT_LE(drain.samples.size(), 16u);
  EXPECT_EQ(drain.enabled_ns[0], 0u) << "a software event is never multiplexed: its times are not read";
  EXPECT_EQ(sampler.events(), 1u);
}

// The clock events' period where the event names none is the caller's (a recording in process
// asks for a tenth of the command's rate); one the event names is kept.
TEST(PerfSampler, TheClockPeriodIsTheCallersWhereTheEventNamesNone) {
  const int tid = static_cast<int>(syscall(SYS_gettid));
  SamplingOptions slower;
  slower.clock_period_ns = 20000000;
  PerfSampler sampler = PerfSampler::create({"task-clock", "cpu-clock:period=3000000", "page-faults"}, {tid}, {}, slower);
  ASSERT_EQ(sampler.status().size(), 3u);
  for (const CounterStatus& st : sampler.status())
    if (!st.measured) GTEST_SKIP() << st.event << " not sampled here: " << st.reason;
  EXPECT_EQ(sampler.status()[0].period, 20000000u);
  EXPECT_EQ(sampler.status()[1].period, 3000000u) << "a period the event names is kept";
  EXPECT_EQ(sampler.status()[2].period, 16u) << "only the clock events take the caller's period";
  EXPECT_EQ(sampler.periods(), (std::vector<uint64_t>{20000000u, 3000000u, 16u}));
}

// A thread started after the sampler was made (a pool a recording in process meets at a later
// call) is sampled once added, enabled as the others are; the sampler's own reader thread and a
// thread added twice are not opened again.
TEST(PerfSampler, AThreadStartedLaterIsSampledOnceAdded) {
  const int tid = static_cast<int>(syscall(SYS_gettid));
  PerfSampler sampler = PerfSampler::create({"task-clock"}, {tid});
  if (!sampler.status()[0].measured) GTEST_SKIP() << "task-clock not sampled here: " << sampler.status()[0].reason;
  sampler.enable();
  std::atomic<int> later{0};
  std::atomic<bool> added{false};
  std::thread worker([&] {
    later = static_cast<int>(syscall(SYS_gettid));
    while (!added) std::this_thread::yield();
    spin_thread_cpu(std::chrono::milliseconds(30));
  });
  while (later == 0) std::this_thread::yield();
  sampler.add_threads(process_threads());
  sampler.add_threads(process_threads());  // nothing new: nothing opened again
  added = true;
  worker.join();
  sampler.disable();
  SamplerDrain drain;
  sampler.drain(drain);
  size_t from_later = 0;
  for (const RawSample& s : drain.samples) from_later += s.tid == later;
  EXPECT_GE(from_later, 3u) << "30 ms of the later thread's CPU time at one sample per 2 ms";
  EXPECT_THAT(sampler.describe(), HasSubstr("on 2 thread(s)")) << "this thread and the later one, not the reader";
}

TEST(AttributeIntervals, EachIntervalsCountSharedByTimeAmongTheOpsRunningInIt) {
  // Readings at 0, 100, 200, 300: 1000, 10 and 400 counted in the three intervals.
  std::vector<IntervalReading> readings(4);
  for (int k = 0; k < 4; ++k) readings[k].time_ns = 100 * k;
  readings[0].delta = {0};
  readings[1].delta = {1000};
  readings[2].delta = {10};
  readings[3].delta = {400};
  const std::vector<SampleSpan> spans = {span(50, 150, -1, 0, true),   // half of the first, half of the second
                                         span(60, 70, 0, 0, true),     // a tenth of the first, nested
                                         span(60, 70, 0, 0, false),    // not counted
                                         span(200, 300, -1, 1, true),  // counted flag from the caller
                                         span(350, 400, -1, 0, true)}; // after the last reading
  auto got = attribute_intervals(spans, readings, 1);
  ASSERT_EQ(got.size(), spans.size());
  EXPECT_DOUBLE_EQ(got[0][0], 500.0 + 5.0);
  EXPECT_DOUBLE_EQ(got[1][0], 100.0);
  EXPECT_TRUE(got[2].empty());
  EXPECT_DOUBLE_EQ(got[3][0], 400.0);
  EXPECT_DOUBLE_EQ(got[4][0], 0.0) << "no reading covers it";
}

// System-wide events read at an interval: the thread that reads them, the readings' times and
// counts, with a software event standing in for an uncore one (these VMs have no uncore PMU).
TEST(PerfSampler, IntervalEventsAreReadEveryIntervalWhileEnabled) {
  BandwidthEvents system;
  system.events = {"cpu-clock"};
  system.cpus = {0};
  const int tid = static_cast<int>(syscall(SYS_gettid));
  PerfSampler sampler = PerfSampler::create({"task-clock"}, {tid}, system, SamplingOptions{2000000});
  ASSERT_EQ(sampler.status().size(), 2u);
  const CounterStatus& st = sampler.status()[1];
  EXPECT_EQ(st.mode, CounterMode::interval);
  EXPECT_EQ(st.scope, CounterScope::system);
  if (!st.measured) GTEST_SKIP() << "cpu-clock cannot be counted system-wide here: " << st.reason;
  EXPECT_EQ(st.period, 2000000u);
  EXPECT_EQ(sampler.interval_events(), 1u);
  EXPECT_EQ(sampler.events(), 2u);
  const auto t0 = std::chrono::steady_clock::now();
  sampler.enable();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  sampler.disable();
  const auto t1 = std::chrono::steady_clock::now();
  SamplerDrain drain;
  sampler.drain(drain);
  ASSERT_GE(drain.intervals.size(), 5u) << "a reading about every 2 ms of 30";
  EXPECT_LE(drain.intervals.size(), 30u / 2 + 3);
  EXPECT_GE(drain.intervals.front().time_ns, t0.time_since_epoch().count());
  EXPECT_LE(drain.intervals.back().time_ns, t1.time_since_epoch().count());
  double counted = 0;
  for (size_t k = 1; k < drain.intervals.size(); ++k) {
    EXPECT_GT(drain.intervals[k].time_ns, drain.intervals[k - 1].time_ns);
    counted += drain.intervals[k].delta.at(0);
  }
  const double span = static_cast<double>(drain.intervals.back().time_ns - drain.intervals.front().time_ns);
  EXPECT_NEAR(counted, span, 0.1 * span) << "cpu-clock on one CPU counts the nanoseconds between readings";
  SamplerDrain idle;
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  sampler.drain(idle);
  EXPECT_TRUE(idle.intervals.empty()) << "no reading while disabled";
}

TEST(PerfSampler, NoThreadsMeansNothingSampledWithAReason) {
  PerfSampler sampler = PerfSampler::create({"task-clock"}, {});
  ASSERT_EQ(sampler.status().size(), 1u);
  EXPECT_FALSE(sampler.status()[0].measured);
  EXPECT_THAT(sampler.status()[0].reason, HasSubstr("no thread"));
  EXPECT_EQ(sampler.events(), 0u);
}

}  // namespace
}  // namespace layoutprof
