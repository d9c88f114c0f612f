// Perf counting as a collector: every counter group read at the start and end of each counted op.
#include <fmt/format.h>  // in a .cpp of a torch-free layer only (src/support/format.cpp says why)

#include <chrono>

#include "counters/collectors.h"

namespace layoutprof {

namespace {

// Reserves room for n elements and touches it: memory first written inside an op would
// page-fault there, and the counters would charge their own page faults to the op.
template <typename Vector>
void reserve_resident(Vector& v, size_t n) {
  v.reserve(n);
  v.resize(n);
  v.clear();
}

// What one read of every group costs, measured: the price of counting, twice per counted op.
std::string counting_cost(const PerfCounters& counters) {
  std::vector<uint64_t> snapshot(counters.snapshot_size());
  constexpr int kReads = 200;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kReads; ++i) counters.read(snapshot.data());
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kReads;
  return fmt::format(
      " (exact per op; a read of every group took {:.2f} us, measured over {} reads: twice that inside each "
      "top-level op and copy)",
      us, kReads);
}

}  // namespace

bool CountingCollector::active() const { return counters_.events() > 0; }

void CountingCollector::start(size_t ops) {
  ops_.clear();
  open_.clear();
  snapshots_.clear();
  if (snapshots_.capacity() < ops * counters_.snapshot_size()) {
    reserve_resident(snapshots_, ops * counters_.snapshot_size());
    reserve_resident(ops_, ops);
    reserve_resident(open_, 64);
  }
}

int32_t CountingCollector::snapshot() {
  const size_t size = counters_.snapshot_size();
  const size_t at = snapshots_.size();
  snapshots_.resize(at + size);
  counters_.read(snapshots_.data() + at);
  return static_cast<int32_t>(at / size);
}

void CountingCollector::op_start(uint32_t /*op*/) {
  open_.push_back(static_cast<int32_t>(ops_.size()));
  ops_.emplace_back(snapshot(), -1);
}

void CountingCollector::op_end() {
  if (open_.empty()) return;
  ops_[open_.back()].second = snapshot();
  open_.pop_back();
}

void CountingCollector::collect(CallRecords& out) {
  out.counting = true;
  out.counted.clear();
  out.counted.reserve(ops_.size());
  const size_t size = counters_.snapshot_size();
  for (const auto& [begin, end] : ops_) {
    if (end < 0) {
      out.counted.emplace_back();
      continue;
    }
    out.counted.push_back(counter_delta(snapshots_.data() + begin * size, snapshots_.data() + end * size,
                                        counters_.groups(), counters_.events()));
  }
}

void CountingCollector::notes(RunInfo& run) const {
  run.counters.insert(run.counters.end(), counters_.status().begin(), counters_.status().end());
  run.counter_mode = CounterMode::counted;
  run.counter_read = counters_.read_method() + " on " + std::to_string(counters_.groups().size()) +
                     " group(s), at every top-level op and copy" + (active() ? counting_cost(counters_) : "");
}

}  // namespace layoutprof
