#include "runner/open_collectors.h"

#include "counters/process_threads.h"
#include "runner/run_notes.h"

namespace layoutprof {

std::vector<Collector*> Collectors::all() const {
  std::vector<Collector*> out;
  for (const auto& c : list) out.push_back(c.get());
  return out;
}

namespace {
SamplingOptions sampling_options(const ProfileConfig& config) {
  SamplingOptions o;
  o.clock_period_ns = config.clock_period_ns;
  return o;
}
}  // namespace

void open_collectors(const ProfileConfig& config, const at::Device& device, Collectors& open, RunInfo& run) {
  const std::vector<std::string> events = config.events.empty() ? PerfCounters::default_events() : config.events;
  const BandwidthEvents bandwidth =
      config.counters ? PerfCounters::bandwidth_events(config.bandwidth_events) : BandwidthEvents{};
  if (config.counters && config.sample_counters) {
    // Sampled (the default): nothing is read per op; the samples are attributed after each call.
    open.sampler.emplace(PerfSampler::create(events, process_threads(), bandwidth, sampling_options(config)));
    open.list.push_back(std::make_unique<SamplingCollector>(*open.sampler));
  } else if (config.counters) {
    open.counters.emplace(PerfCounters::create(events, process_threads(), bandwidth));
    open.list.push_back(std::make_unique<CountingCollector>(*open.counters));
  }
  for (const auto& c : open.list) c->notes(run);
  note_bandwidth(config, bandwidth, open.sampler.has_value(), run);
  if (device.is_cuda())
    if (const std::string why = open_gpu_tracer(device.has_index() ? device.index() : -1, open, run); !why.empty())
      run.not_measured.push_back("GPU time: " + why);
}

std::string open_gpu_tracer(int device, Collectors& open, RunInfo& run) {
  std::string why;
  open.gpu = create_gpu_tracer(device, &why);
  if (!open.gpu) return why;
  auto collector = std::make_unique<GpuCollector>(*open.gpu);
  open.gpu_collector = collector.get();
  collector->notes(run);
  open.list.push_back(std::move(collector));
  return "";
}

}  // namespace layoutprof
