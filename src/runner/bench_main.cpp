// layoutprof-bench MODEL --input SPEC... [--reps N] [--counters]: the cost of recording, measured side by
// side in one process: plain forward() vs forward() under the layoutprof observer, interleaved
// so that machine noise hits both alike. Prints one JSON line.
// layoutprof-bench MODEL --input SPEC... --plain N: N plain forward() calls and nothing else.
// layoutprof-bench MODEL --input SPEC... --counter-modes [--reps N]: plain forward() against
// whole recorded calls without counters, with the default events sampled (a run's default) and
// with them counted, the four interleaved round by round; the counters' own cost per op event
// and per sample from the paired differences with the call without counters.
#include <ATen/record_function.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>

#include "layoutprof/counters.h"
#include "layoutprof/input_spec.h"
#include "record/recorder.h"
#include "runner/inputs.h"
#include "runner/training.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A global callback that does nothing (inputs not boxed), on the scopes a run records: what
// RecordFunction itself costs any observer.
at::RecordFunctionCallback empty_callback(bool backward) {
  return at::RecordFunctionCallback(
             [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> { return nullptr; },
             [](const at::RecordFunction&, at::ObserverContext*) {})
      .scopes(backward ? std::unordered_set<at::RecordScope, std::hash<at::RecordScope>>{
                             at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}
                       : std::unordered_set<at::RecordScope, std::hash<at::RecordScope>>{
                             at::RecordScope::FUNCTION});
}

// The counters' cost, measured as a run pays it: whole recorded calls (start(), forward, stop()
// converting and keeping the events, the samples drained and attributed), the first recording
// tensors and the others figures only, as a run records them.
template <typename Step>
int compare_counter_modes(layoutprof::Recorder& recorder, Step& step, int reps, const std::string& model_path,
                          std::vector<std::string> events) {
  using clock = std::chrono::steady_clock;
  if (events.empty()) events = layoutprof::PerfCounters::default_events();
  const auto tids = layoutprof::process_threads();
  layoutprof::PerfSampler sampler = layoutprof::PerfSampler::create(events, tids);
  layoutprof::PerfCounters counters = layoutprof::PerfCounters::create(events, tids);
  struct Mode {
    const char* name;
    const layoutprof::PerfCounters* counters;
    const layoutprof::PerfSampler* sampler;
    std::vector<layoutprof::Call> kept;
    std::vector<double> ms;
  };
  std::vector<Mode> modes = {{"none", nullptr, nullptr, {}, {}},
                             {"sampled", nullptr, &sampler, {}, {}},
                             {"counted", &counters, nullptr, {}, {}}};
  std::vector<double> plain;
  auto record = [&](Mode& m) {
    const auto t0 = clock::now();
    const bool first = m.kept.empty();
    recorder.start(first ? layoutprof::Recorder::Mode::timed : layoutprof::Recorder::Mode::figures, m.counters,
                   nullptr, m.sampler);
    step(true);
    m.kept.push_back(first ? recorder.stop() : recorder.stop_figures(m.kept.front()));
    m.kept.back().spill();
    if (first) m.kept.front().park();
    m.ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  };
  for (int r = 0; r < reps; ++r) {
    // Each round in another order, so that cache warmth and drift favour none.
    const auto t0 = clock::now();
    step(false);
    plain.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    for (size_t k = 0; k < modes.size(); ++k) record(modes[(k + static_cast<size_t>(r)) % modes.size()]);
  }
  recorder.release_spare();
  for (Mode& m : modes) m.kept.front().unpark();
  const double ops = static_cast<double>(modes[0].kept.front().events.size());
  double samples = 0;
  for (const layoutprof::Call& c : modes[1].kept)
    for (const auto& t : c.sample_totals) samples += static_cast<double>(t.samples);
  samples /= static_cast<double>(modes[1].kept.size());
  // Paired differences with the call without counters, round by round.
  auto extra_ms = [&](const Mode& m) {
    std::vector<double> d;
    for (size_t r = 0; r < m.ms.size(); ++r) d.push_back(m.ms[r] - modes[0].ms[r]);
    return median(d);
  };
  const double p = median(plain);
  std::string periods;
  for (size_t k = 0, j = 0; k < sampler.status().size(); ++k)
    if (sampler.status()[k].measured)
      periods += (periods.empty() ? "" : ", ") + sampler.status()[k].event + " every " + std::to_string(sampler.periods()[j++]);
  std::cout << "{\"model\": \"" << model_path << "\", \"plain_ms\": " << p << ", \"reps\": " << reps
            << ", \"ops\": " << ops << ", \"samples_per_call\": " << samples << ", \"sampled_events\": \"" << periods
            << "\", \"counted_events\": " << counters.events();
  for (const Mode& m : modes) {
    std::cout << ", \"" << m.name << "_ratio\": " << median(m.ms) / p;
    if (m.counters || m.sampler) {
      const double extra = extra_ms(m);
      std::cout << ", \"" << m.name << "_extra_ms\": " << extra << ", \"" << m.name
                << "_ns_per_op_event\": " << extra * 1e6 / ops;
    }
  }
  std::cout << ", \"sampled_ns_per_sample\": " << (samples > 0 ? extra_ms(modes[1]) * 1e6 / samples : 0) << "}\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: layoutprof-bench MODEL --input SPEC [--input SPEC...] [--reps N]\n";
    return 2;
  }
  std::string model_path = argv[1];
  std::vector<layoutprof::InputSpec> specs;
  int reps = 15;
  int plain_calls = 0;
  bool with_counters = false;
  bool backward = false;  // each call a training step, as --backward runs them
  bool counter_modes = false;
  std::vector<std::string> counter_events;  // --counter-modes: the events (default: a run's)
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--counters")) with_counters = true;
    else if (!std::strcmp(argv[i], "--backward")) backward = true;
    else if (!std::strcmp(argv[i], "--counter-modes")) counter_modes = true;
    else if (!std::strcmp(argv[i], "--events") && i + 1 < argc) counter_events = layoutprof::split_event_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--input") && i + 1 < argc) specs.push_back(layoutprof::parse_input_spec(argv[++i]));
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--plain") && i + 1 < argc) plain_calls = std::stoi(argv[++i]);
  }
  torch::jit::Module module = torch::jit::load(model_path);
  // A training step: train mode, autograd on, every floating-point parameter trained (the
  // samples' inference models are saved frozen).
  std::optional<torch::NoGradGuard> no_grad;
  if (backward) {
    module.train();
    for (at::Tensor p : module.parameters()) if (p.is_floating_point()) p.requires_grad_(true);
  } else {
    module.eval();
    no_grad.emplace();
  }
  torch::manual_seed(0);
  std::vector<c10::IValue> inputs;
  for (const auto& s : specs) inputs.emplace_back(layoutprof::make_input(s));
  layoutprof::Recorder recorder;
  recorder.set_training(backward);
  // One call as a run makes it: forward(), and for a training step the backward pass from a
  // seeded upstream gradient and the gradients cleared.
  auto step = [&](bool mark) {
    c10::IValue out = module.forward(inputs);
    if (!backward) return;
    layoutprof::backward_from(out, "randn", [&] {
      if (mark) recorder.mark_backward();
    });
    layoutprof::clear_grads(module);
  };
  if (plain_calls > 0) {
    // The plain run that scripts/bench_scale.py holds a layoutprof run against: load, build
    // the inputs and make the same number of forward() calls, nothing else; the caller reads
    // this process's peak RSS and wall time.
    std::vector<double> ms;
    for (int i = 0; i < plain_calls; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      step(false);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::cout << "{\"model\": \"" << model_path << "\", \"calls\": " << plain_calls
              << ", \"call_ms\": " << median(ms) << "}\n";
    return 0;
  }
  for (int i = 0; i < 3; ++i) step(false);
  if (counter_modes) return compare_counter_modes(recorder, step, reps, model_path, counter_events);

  // Counters as layoutprof opens them by default; the cost of one read of every group.
  std::optional<layoutprof::PerfCounters> counters;
  double read_ns = 0;
  size_t measured = 0;
  if (with_counters) {
    counters.emplace(layoutprof::PerfCounters::create(layoutprof::PerfCounters::default_events(),
                                                      layoutprof::process_threads()));
    measured = counters->events();
    std::vector<uint64_t> snap(counters->snapshot_size());
    const int n = 20000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) counters->read(snap.data());
    read_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
  }

  using clock = std::chrono::steady_clock;
  // recorded: the forward under the observer; call: everything a recorded call costs the user,
  // from start() to stop() returning its events converted, which are kept as a run keeps them.
  std::vector<double> plain, recorded, call;
  std::vector<layoutprof::Call> kept;
  size_t events = 0;
  auto plain_call = [&] {
    auto t0 = clock::now();
    step(false);
    plain.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  };
  auto recorded_call = [&] {
    auto begin = clock::now();
    // As a run records them: the first call whole, the others as their figures only.
    const bool first = kept.empty();
    recorder.start(first ? layoutprof::Recorder::Mode::timed : layoutprof::Recorder::Mode::figures,
                   counters ? &*counters : nullptr);
    auto t0 = clock::now();
    step(true);
    recorded.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    kept.push_back(first ? recorder.stop() : recorder.stop_figures(kept.front()));
    kept.back().spill();  // as a run keeps them
    if (first) kept.back().park();
    call.push_back(std::chrono::duration<double, std::milli>(clock::now() - begin).count());
    if (first) events = kept.back().events.size();
  };
  // The floor: the same forward under a global callback that does nothing (FUNCTION scope,
  // inputs not boxed), which is what RecordFunction itself costs any observer.
  std::vector<double> empty;
  auto empty_call = [&] {
    auto handle = at::addGlobalCallback(empty_callback(backward));
    auto t0 = clock::now();
    step(false);
    empty.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    at::removeCallback(handle);
  };
  for (int r = 0; r < reps; ++r) {
    empty_call();
    // Alternate which goes first so that cache warmth favours neither.
    if (r % 2) {
      plain_call();
      recorded_call();
    } else {
      recorded_call();
      plain_call();
    }
  }
  recorder.release_spare();  // as a run does after its last call
  if (!kept.empty()) kept.front().unpark();
  // The callbacks alone, without any op's work: RecordFunction objects made and ended in a
  // loop with no callback, under the empty one, and under the recorder (Mode::figures, as
  // every call after the first), in ns per op event; the recorder's includes stop_figures().
  auto per_event_ns = [&](int n) {
    auto t0 = clock::now();
    for (int i = 0; i < n; ++i) {
      at::RecordFunction guard(at::RecordScope::FUNCTION);
      if (guard.isActive()) guard.before("aten::add");
    }
    return std::chrono::duration<double, std::nano>(clock::now() - t0).count() / n;
  };
  const int loop = 200000;
  std::vector<double> bare_ns, empty_ns, observer_ns;
  for (int r = 0; r < 5 && !kept.empty() && !backward; ++r) {
    bare_ns.push_back(per_event_ns(loop));
    auto handle = at::addGlobalCallback(empty_callback(false));
    empty_ns.push_back(per_event_ns(loop));
    at::removeCallback(handle);
    auto t0 = clock::now();
    recorder.start(layoutprof::Recorder::Mode::figures, counters ? &*counters : nullptr);
    per_event_ns(loop);
    layoutprof::Call figures = recorder.stop_figures(kept.front());
    figures.spill();
    observer_ns.push_back(std::chrono::duration<double, std::nano>(clock::now() - t0).count() / loop);
  }
  double p = median(plain), q = median(recorded), c = median(call);
  std::cout << "{\"model\": \"" << model_path << "\", \"plain_ms\": " << p
            << ", \"recorded_ms\": " << q << ", \"ratio\": " << q / p
            << ", \"call_ms\": " << c << ", \"call_ratio\": " << c / p
            << ", \"first_call_ms\": " << call.front() << ", \"first_call_ratio\": " << call.front() / p
            << ", \"empty_observer_ratio\": " << median(empty) / p << ", \"ops\": " << events
            << ", \"rf_bare_ns\": " << (bare_ns.empty() ? 0 : median(bare_ns))
            << ", \"rf_empty_ns\": " << (empty_ns.empty() ? 0 : median(empty_ns))
            << ", \"rf_observer_ns\": " << (observer_ns.empty() ? 0 : median(observer_ns))
            << ", \"reps\": " << reps << ", \"counters\": " << measured
            << ", \"counter_read_ns\": " << read_ns << "}\n";
  return 0;
}
