// layoutprof-bench MODEL --input SPEC... [--reps N] [--counters]: the cost of recording, measured side by
// side in one process: plain forward() vs forward() under the layoutprof observer, interleaved
// so that machine noise hits both alike. Prints one JSON line.
// layoutprof-bench MODEL --input SPEC... --plain N: N plain forward() calls and nothing else.
// layoutprof-bench MODEL --input SPEC... --counter-modes [--reps N]: plain forward() against
// whole recorded calls without counters, with the default events sampled (a run's default) and
// with them counted, the four interleaved round by round; the counters' own cost per op event
// and per sample from the paired differences with the call without counters.
// layoutprof-bench MODEL --input SPEC... --against OTHER [--reps N]: plain calls of MODEL and
// OTHER (the same program in another format: a .pt beside its .pt2) on the same inputs,
// interleaved round by round: what each front end costs per op beyond the kernels they share.
// layoutprof-bench MODEL --load-only: this process's peak RSS before and after loading MODEL,
// against the bytes of its parameters and buffers.
// The model is loaded and stepped through Model, as a run does.
#include <ATen/core/grad_mode.h>
#include <ATen/record_function.h>
#include <CLI/CLI.hpp>
#include <torch/utils.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <iostream>
#include <optional>
#include <set>

#include <sys/resource.h>

#include "counters/collectors.h"
#include "counters/counters.h"
#include "counters/process_threads.h"
#include "core/input_spec.h"
#include "record/recorder.h"
#include "runner/inputs.h"
#include "runner/model.h"
#include "runner/training.h"
#include "support/process_memory.h"

namespace layoutprof {
namespace {

using clock = std::chrono::steady_clock;

struct BenchOptions {
  std::string model;
  std::vector<std::string> inputs;
  int reps = 15;
  int plain = 0;            // --plain N: N plain calls and nothing else
  bool counters = false;    // the default counters counted in the recorded calls
  bool backward = false;    // each call a training step, as --backward runs them
  bool counter_modes = false;
  std::string events;       // --counter-modes: the events (default: a run's)
  std::string against;      // --against OTHER: plain calls of both front ends
  bool load_only = false;   // --load-only: peak RSS of loading against the weights' bytes
};

// Returns the exit code when the bench stops here: 0 after --help, 2 (one line) for an
// unknown flag or a bad value.
std::optional<int> parse_options(int argc, char** argv, BenchOptions& o) {
  CLI::App app{"layoutprof-bench: the cost of recording a model's calls, side by side with plain calls"};
  app.add_option("model", o.model, "TorchScript archive")->required();
  app.add_option("--input", o.inputs, "one per forward() argument, as layoutprof --input");
  app.add_option("--reps", o.reps, "interleaved rounds")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--plain", o.plain, "only N plain calls: their median time")->check(CLI::NonNegativeNumber);
  app.add_flag("--counters", o.counters, "the default counters counted in the recorded calls");
  app.add_flag("--backward", o.backward, "training steps: forward, backward from a seeded gradient");
  app.add_flag("--counter-modes", o.counter_modes, "recorded calls without counters, sampled and counted");
  app.add_option("--events", o.events, "--counter-modes: the events, comma-separated (default: a run's)");
  app.add_option("--against", o.against, "plain calls of this model file too, interleaved (the same program in another format)");
  app.add_flag("--load-only", o.load_only, "peak RSS of loading the model, against its parameters' and buffers' bytes");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "layoutprof-bench: " << e.what() << " (see --help)\n";
    return 2;
  }
  return std::nullopt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ms_since(clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); }

// The model, its inputs and the recorder, with one step as a run makes it: forward(), and for
// a training step the backward pass from a seeded upstream gradient and the gradients cleared.
class Bench {
 public:
  explicit Bench(const BenchOptions& o) : model_(load_model(o.model)) {
    // A training step: train mode, autograd on, every floating-point parameter trained (the
    // samples' inference models are saved frozen).
    model_->set_training(o.backward);
    if (o.backward) {
      for (NamedTensor& p : model_->named_parameters())
        if (p.tensor.is_floating_point()) p.tensor.requires_grad_(true);
    } else {
      no_grad_.emplace();
    }
    torch::manual_seed(0);
    for (const std::string& text : o.inputs) inputs_.emplace_back(make_input(parse_input_spec(text)));
    if (o.inputs.empty()) inputs_ = model_->sample_inputs();  // a .pt2's own
    recorder.set_training(o.backward);
    step_.emplace(*model_, o.backward, "randn");
  }
  // `mark`: the backward pass's start marked for the recorder.
  void step(bool mark) {
    (*step_)(inputs_, [&] {
      if (mark) recorder.mark_backward();
    });
  }
  // One plain step's wall time, ms.
  double plain_ms() {
    const auto t0 = clock::now();
    step(false);
    return ms_since(t0);
  }

  Model& model() { return *model_; }
  Recorder recorder;

 private:
  std::unique_ptr<Model> model_;
  std::optional<at::NoGradGuard> no_grad_;
  std::vector<c10::IValue> inputs_;
  std::optional<ModelStep> step_;
};

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

// The plain run that scripts/bench_scale.py holds a layoutprof run against: load, build the
// inputs and make the same number of forward() calls, nothing else; the caller reads this
// process's peak RSS and wall time.
int plain_calls(Bench& bench, const BenchOptions& o) {
  std::vector<double> ms;
  for (int i = 0; i < o.plain; ++i) ms.push_back(bench.plain_ms());
  std::cout << "{\"model\": \"" << o.model << "\", \"calls\": " << o.plain << ", \"call_ms\": " << median(ms) << "}\n";
  return 0;
}

// The recorder's list of collectors: `c`, or none.
std::vector<Collector*> collectors_of(Collector* c) { return c ? std::vector<Collector*>{c} : std::vector<Collector*>{}; }

// One recorder mode of --counter-modes, and what its calls kept and took.
struct CounterMode {
  const char* name;
  Collector* collector;  // null: none
  std::vector<Call> kept;
  std::vector<double> ms;
};

// A whole recorded call as a run makes it (start(), the step, stop() converting and keeping
// the events, the samples drained and attributed): the first recording tensors, the others
// figures only.
void record_whole_call(Bench& bench, CounterMode& m) {
  const auto t0 = clock::now();
  const bool first = m.kept.empty();
  bench.recorder.start(first ? Recorder::Mode::timed : Recorder::Mode::figures, collectors_of(m.collector));
  bench.step(true);
  m.kept.push_back(first ? bench.recorder.stop() : bench.recorder.stop_figures(m.kept.front()));
  m.kept.back().spill();
  if (first) m.kept.front().park();
  m.ms.push_back(ms_since(t0));
}

// The counters' cost, measured as a run pays it: whole recorded calls without counters, with
// the events sampled and with them counted, each round in another order so that cache warmth
// and drift favour none.
int compare_counter_modes(Bench& bench, const BenchOptions& o) {
  std::vector<std::string> events = split_event_list(o.events);
  if (events.empty()) events = PerfCounters::default_events();
  const auto tids = process_threads();
  PerfSampler sampler = PerfSampler::create(events, tids);
  PerfCounters counters = PerfCounters::create(events, tids);
  SamplingCollector sampling(sampler);
  CountingCollector counting(counters);
  std::vector<CounterMode> modes = {{"none", nullptr, {}, {}}, {"sampled", &sampling, {}, {}}, {"counted", &counting, {}, {}}};
  std::vector<double> plain;
  for (int r = 0; r < o.reps; ++r) {
    plain.push_back(bench.plain_ms());
    for (size_t k = 0; k < modes.size(); ++k) record_whole_call(bench, modes[(k + static_cast<size_t>(r)) % modes.size()]);
  }
  bench.recorder.release_spare();
  for (CounterMode& m : modes) m.kept.front().unpark();
  const double ops = static_cast<double>(modes[0].kept.front().events.size());
  double samples = 0;
  for (const Call& c : modes[1].kept)
    for (const auto& t : c.sample_totals) samples += static_cast<double>(t.samples);
  samples /= static_cast<double>(modes[1].kept.size());
  // Paired differences with the call without counters, round by round.
  auto extra_ms = [&](const CounterMode& m) {
    std::vector<double> d;
    for (size_t r = 0; r < m.ms.size(); ++r) d.push_back(m.ms[r] - modes[0].ms[r]);
    return median(d);
  };
  const double p = median(plain);
  std::string periods;
  for (size_t k = 0, j = 0; k < sampler.status().size(); ++k)
    if (sampler.status()[k].measured)
      periods += (periods.empty() ? "" : ", ") + sampler.status()[k].event + " every " + std::to_string(sampler.periods()[j++]);
  std::cout << "{\"model\": \"" << o.model << "\", \"plain_ms\": " << p << ", \"reps\": " << o.reps
            << ", \"ops\": " << ops << ", \"samples_per_call\": " << samples << ", \"sampled_events\": \"" << periods
            << "\", \"counted_events\": " << counters.events();
  for (const CounterMode& m : modes) {
    std::cout << ", \"" << m.name << "_ratio\": " << median(m.ms) / p;
    if (m.collector) {
      const double extra = extra_ms(m);
      std::cout << ", \"" << m.name << "_extra_ms\": " << extra << ", \"" << m.name
                << "_ns_per_op_event\": " << extra * 1e6 / ops;
    }
  }
  std::cout << ", \"sampled_ns_per_sample\": " << (samples > 0 ? extra_ms(modes[1]) * 1e6 / samples : 0) << "}\n";
  return 0;
}

// The default mode's figures, each a list of one per round.
struct Overhead {
  std::vector<double> plain;     // a plain step
  std::vector<double> recorded;  // the step under the observer
  std::vector<double> call;      // everything a recorded call costs: start() to stop() returning
  std::vector<double> empty;     // the step under a callback that does nothing
  std::vector<Call> kept;        // the recorded calls, kept as a run keeps them
  size_t events = 0;             // op events of the first recorded call
};

// A recorded call as a run records it (the first whole, the others as their figures only),
// timed as the step under the observer and as everything the call costs the user.
void recorded_call(Bench& bench, Collector* counting, Overhead& o) {
  const auto begin = clock::now();
  const bool first = o.kept.empty();
  bench.recorder.start(first ? Recorder::Mode::timed : Recorder::Mode::figures, collectors_of(counting));
  const auto t0 = clock::now();
  bench.step(true);
  o.recorded.push_back(ms_since(t0));
  o.kept.push_back(first ? bench.recorder.stop() : bench.recorder.stop_figures(o.kept.front()));
  o.kept.back().spill();  // as a run keeps them
  if (first) o.kept.back().park();
  o.call.push_back(ms_since(begin));
  if (first) o.events = o.kept.back().events.size();
}

// The floor: the same step under a global callback that does nothing (inputs not boxed),
// which is what RecordFunction itself costs any observer.
void empty_observer_call(Bench& bench, bool backward, Overhead& o) {
  auto handle = at::addGlobalCallback(empty_callback(backward));
  o.empty.push_back(bench.plain_ms());
  at::removeCallback(handle);
}

// RecordFunction objects made and ended in a loop with no op, in ns each.
double per_event_ns(int n) {
  const auto t0 = clock::now();
  for (int i = 0; i < n; ++i) {
    at::RecordFunction guard(at::RecordScope::FUNCTION);
    if (guard.isActive()) guard.before("aten::add");
  }
  return std::chrono::duration<double, std::nano>(clock::now() - t0).count() / n;
}

// The callbacks alone, without any op's work, in ns per op event: no callback, the empty one,
// and the recorder (Mode::figures, as every call after the first, its stop_figures() included).
std::array<double, 3> callback_ns(Bench& bench, Collector* counting, const Call& first) {
  const int loop = 200000;
  std::vector<double> bare, empty, observer;
  for (int r = 0; r < 5; ++r) {
    bare.push_back(per_event_ns(loop));
    auto handle = at::addGlobalCallback(empty_callback(false));
    empty.push_back(per_event_ns(loop));
    at::removeCallback(handle);
    const auto t0 = clock::now();
    bench.recorder.start(Recorder::Mode::figures, collectors_of(counting));
    per_event_ns(loop);
    Call figures = bench.recorder.stop_figures(first);
    figures.spill();
    observer.push_back(std::chrono::duration<double, std::nano>(clock::now() - t0).count() / loop);
  }
  return {median(bare), median(empty), median(observer)};
}

// The cost of one read of every counter group, ns.
double counter_read_ns(const PerfCounters& counters) {
  std::vector<uint64_t> snap(counters.snapshot_size());
  const int n = 20000;
  const auto t0 = clock::now();
  for (int i = 0; i < n; ++i) counters.read(snap.data());
  return std::chrono::duration<double, std::nano>(clock::now() - t0).count() / n;
}

// Plain, recorded and empty-observer steps interleaved round by round, and the callbacks alone.
int measure_overhead(Bench& bench, const BenchOptions& opts) {
  std::optional<PerfCounters> counters;  // as layoutprof opens them by default
  if (opts.counters) counters.emplace(PerfCounters::create(PerfCounters::default_events(), process_threads()));
  std::optional<CountingCollector> counting;
  if (counters) counting.emplace(*counters);
  Collector* read = counting ? &*counting : nullptr;
  const double read_ns = counters ? counter_read_ns(*counters) : 0;
  Overhead o;
  for (int r = 0; r < opts.reps; ++r) {
    empty_observer_call(bench, opts.backward, o);
    // Alternate which goes first so that cache warmth favours neither.
    if (r % 2) o.plain.push_back(bench.plain_ms());
    recorded_call(bench, read, o);
    if (r % 2 == 0) o.plain.push_back(bench.plain_ms());
  }
  bench.recorder.release_spare();  // as a run does after its last call
  if (!o.kept.empty()) o.kept.front().unpark();
  std::array<double, 3> rf{0, 0, 0};
  if (!o.kept.empty() && !opts.backward) rf = callback_ns(bench, read, o.kept.front());
  const double p = median(o.plain), q = median(o.recorded), c = median(o.call);
  std::cout << "{\"model\": \"" << opts.model << "\", \"plain_ms\": " << p << ", \"recorded_ms\": " << q
            << ", \"ratio\": " << q / p << ", \"call_ms\": " << c << ", \"call_ratio\": " << c / p
            << ", \"first_call_ms\": " << o.call.front() << ", \"first_call_ratio\": " << o.call.front() / p
            << ", \"empty_observer_ratio\": " << median(o.empty) / p << ", \"ops\": " << o.events
            << ", \"rf_bare_ns\": " << rf[0] << ", \"rf_empty_ns\": " << rf[1] << ", \"rf_observer_ns\": " << rf[2]
            << ", \"reps\": " << opts.reps << ", \"counters\": " << (counters ? counters->events() : 0)
            << ", \"counter_read_ns\": " << read_ns << "}\n";
  return 0;
}

// Op events (every FUNCTION-scope RecordFunction, nested ones too) one plain step makes.
std::atomic<int64_t> g_op_events{0};
int64_t op_events(Bench& bench) {
  g_op_events = 0;
  auto handle = at::addGlobalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> {
            ++g_op_events;
            return nullptr;
          },
          [](const at::RecordFunction&, at::ObserverContext*) {})
          .scopes({at::RecordScope::FUNCTION}));
  bench.step(false);
  at::removeCallback(handle);
  return g_op_events;
}

// Plain calls of two front ends on the same inputs, interleaved (which goes first alternates).
int compare_front_ends(Bench& model, const BenchOptions& o) {
  BenchOptions other_options = o;
  other_options.model = o.against;
  Bench other(other_options);
  for (int i = 0; i < 3; ++i) other.step(false);
  std::vector<double> a, b;
  for (int r = 0; r < o.reps; ++r) {
    if (r % 2) a.push_back(model.plain_ms());
    b.push_back(other.plain_ms());
    if (r % 2 == 0) a.push_back(model.plain_ms());
  }
  const int64_t ops_a = op_events(model), ops_b = op_events(other);
  const double ma = median(a), mb = median(b);
  std::cout << "{\"model\": \"" << o.model << "\", \"against\": \"" << o.against << "\", \"model_ms\": " << ma
            << ", \"against_ms\": " << mb << ", \"ratio\": " << mb / ma << ", \"model_ops\": " << ops_a
            << ", \"against_ops\": " << ops_b << ", \"model_us_per_op\": " << 1000 * ma / std::max<int64_t>(1, ops_a)
            << ", \"against_us_per_op\": " << 1000 * mb / std::max<int64_t>(1, ops_b) << ", \"reps\": " << o.reps
            << "}\n";
  return 0;
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

// Peak RSS before and after the load; the weights: every distinct storage of the model's
// parameters and buffers. What the resident set grew by splits into pages of mapped files (the
// libraries' code the load runs for the first time) and anonymous ones (the weights and the
// program's structures).
int measure_load(const BenchOptions& o) {
  const std::optional<ProcessMemory> start = process_memory();
  const int64_t before = peak_rss_bytes();
  std::unique_ptr<Model> model = load_model(o.model);
  const int64_t after = peak_rss_bytes();
  const std::optional<ProcessMemory> end = process_memory();
  std::set<const void*> storages;
  int64_t weights = 0;
  auto add = [&](const std::vector<NamedTensor>& list) {
    for (const NamedTensor& t : list)
      if (storages.insert(t.tensor.storage().data()).second) weights += static_cast<int64_t>(t.tensor.storage().nbytes());
  };
  add(model->named_parameters());
  add(model->named_buffers());
  std::cout << "{\"model\": \"" << o.model << "\", \"peak_rss_before\": " << before << ", \"peak_rss_after\": " << after
            << ", \"weights_bytes\": " << weights << ", \"load_ratio\": "
            << static_cast<double>(after - before) / std::max<int64_t>(1, weights);
  if (start && end)
    std::cout << ", \"file_pages_grew\": " << (end->file_kb - start->file_kb) * 1024
              << ", \"anonymous_grew\": " << (end->anon_kb - start->anon_kb) * 1024;
  std::cout << "}\n";
  return 0;
}

// Loads the model through Model, warms it up as a run does, and measures what `o` asks.
int run_bench(const BenchOptions& o) {
  if (o.load_only) return measure_load(o);
  Bench bench(o);
  if (!o.against.empty()) {
    for (int i = 0; i < 3; ++i) bench.step(false);
    return compare_front_ends(bench, o);
  }
  if (o.plain > 0) return plain_calls(bench, o);
  for (int i = 0; i < 3; ++i) bench.step(false);
  return o.counter_modes ? compare_counter_modes(bench, o) : measure_overhead(bench, o);
}

}  // namespace
}  // namespace layoutprof

int main(int argc, char** argv) {
  layoutprof::BenchOptions options;
  if (std::optional<int> code = layoutprof::parse_options(argc, argv, options)) return *code;
  try {
    return layoutprof::run_bench(options);
  } catch (const std::exception& e) {
    std::cerr << "layoutprof-bench: " << e.what() << "\n";
    return 1;
  }
}
