#include "report/chrome_trace.h"

#include <map>
#include <sstream>
#include <unordered_map>

#include "analysis/hazards.h"
#include "support/flat_index.h"
#include "report/reporter.h"
#include "report/json_out.h"

namespace layoutprof {

using nlohmann::json;

namespace {

std::string describe(const TensorInfo& t) {
  std::string s;
  for (size_t d = 0; d < t.sizes().size(); ++d) s += (d ? "x" : "") + std::to_string(t.sizes()[d]);
  if (t.sizes().empty()) s = "scalar";
  s += " " + t.dtype() + " strides (";
  for (size_t d = 0; d < t.strides().size(); ++d) s += (d ? "," : "") + std::to_string(t.strides()[d]);
  return s + ") " + t.label();
}

// A tensor's description depends on its shape only: made once per shape.
class Descriptions {
 public:
  const std::string& of(const TensorInfo& t) {
    uint32_t id = index_.id(t.shape);
    if (id == text_.size()) text_.push_back(describe(t));
    return text_[id];
  }

 private:
  struct Hash {
    size_t operator()(const TensorShape* s) const { return mix_hash(reinterpret_cast<uintptr_t>(s)); }
  };
  FlatIndex<const TensorShape*, Hash> index_;
  std::vector<std::string> text_;
};

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// Events are written one at a time (a report of a million op events would otherwise become a
// tree of several GB): each through a JsonOut into a buffer flushed every 64 KB.
class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {}
  JsonOut next() {
    buf_ += first_ ? "\n" : ",\n";
    first_ = false;
    return JsonOut(buf_);
  }
  void done_one() {
    if (buf_.size() >= (1 << 16)) flush();
  }
  void flush() {
    buf_.write_to(out_);
    buf_.clear();
  }

 private:
  std::ostream& out_;
  TextBuf buf_;
  bool first_ = true;
};

const int kPid = 1;  // the one process the trace shows

// The process's name and each thread's.
void write_names(EventWriter& w, const Report& r) {
  {
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("name").str("layoutprof: " + r.run.model).end('}');
    o.key("name").str("process_name").key("ph").str("M").key("pid").num(kPid).end('}');
  }
  // Per thread: whether it ran top-level ops of its own (a forked task, or forward() going on
  // after a wait: an inter-op pool thread) or only chunks of the caller's ops (intra-op).
  std::map<uint32_t, bool> threads;
  for (const OpEvent& op : r.ops) threads[op.thread] = threads[op.thread] || op.parent < 0;
  for (const auto& [tid, tasks] : threads) {
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("name");
    o.str(tid == 0 ? std::string("forward() caller")
                   : (tasks ? "inter-op thread " : "intra-op thread ") + std::to_string(tid)).end('}');
    o.key("name").str("thread_name").key("ph").str("M").key("pid").num(kPid).key("tid").num(tid).end('}');
  }
}

// An op's slice's args, keys in order: its copy (if it is one), GPU work, tensors, module, pass
// and source.
void write_op_args(JsonOut& o, const Report& r, const OpEvent& op, const CopyRecord* copy, Descriptions& described) {
  o.begin('{');
  if (copy) {
    o.key("bytes").num(copy->bytes);
    o.key("culprit").str(r.ops[copy->culprit].name);
  }
  if (op.gpu_ns >= 0) o.key("copy_gpu_ns").num(op.copy_gpu_ns);
  if (copy) o.key("dtlb_walks_modelled").num(copy->dtlb.walks);
  if (op.failed) o.key("failed").boolean(true);
  if (op.forward_op >= 0) o.key("forward_op").num(op.forward_op);
  if (op.gpu_ns >= 0) {  // GPU runs: what this op launched (CUPTI, measured)
    o.key("gpu_launches").num(op.gpu_launches);
    o.key("gpu_ns").num(op.gpu_ns);
  }
  o.key("id").num(op.id);
  o.key("inputs").begin('[');
  for (const TensorInfo& t : op.inputs) o.str(described.of(t));
  o.end(']');
  if (op.gpu_ns >= 0) {
    o.key("kernels").begin('[');
    for (Str k : op.kernels) o.str(k);
    o.end(']');
  }
  o.key("module").str(op.module);
  o.key("outputs").begin('[');
  for (const TensorInfo& t : op.outputs) o.str(described.of(t));
  o.end(']');
  if (r.backward_from >= 0)  // training steps: which pass, and the forward op of a backward one
    o.key("pass").str(op.id >= r.backward_from ? "backward" : "forward");
  o.key("source").str(op.source);
  o.end('}');
}

// An op's complete ("X") slice from `start` to `stop`, named and categorised as a copy when
// it is one.
void write_op_slice(EventWriter& w, const Report& r, const OpEvent& op, const CopyRecord* copy, int64_t start,
                    int64_t stop, Descriptions& described) {
  JsonOut o = w.next();
  o.begin('{').key("args");
  write_op_args(o, r, op, copy, described);
  const bool backward = r.backward_from >= 0 && op.id >= r.backward_from;
  if (copy) {
    o.key("cat").str(std::string("copy,") + copy_class_name(copy->cls) + (backward ? ",backward" : ""));
  } else {
    o.key("cat").str(backward ? "op,backward" : "op");
  }
  o.key("dur").real(us(stop - start));
  if (copy) o.key("name").str("copy [" + std::string(copy_class_name(copy->cls)) + "]");
  else o.key("name").str(op.name);
  o.key("ph").str("X").key("pid").num(kPid).key("tid").num(op.thread).key("ts").real(us(start)).end('}');
  w.done_one();
}

// Every op's slice; returns where each slice ends, by op id.
std::vector<int64_t> write_op_slices(EventWriter& w, const Report& r) {
  std::unordered_map<int64_t, const CopyRecord*> copy_of;
  for (const CopyRecord& c : r.copies) copy_of[c.op] = &c;

  // Durations are medians over calls and starts come from one call: clamp each slice into
  // its parent so that slices nest as the viewers require.
  Descriptions described;
  std::vector<int64_t> end(r.ops.size());
  for (const OpEvent& op : r.ops) {
    int64_t start = op.start_ns;
    int64_t stop = op.start_ns + op.duration_ns;
    if (op.parent >= 0 && r.ops[op.parent].thread == op.thread) {
      start = std::max(start, r.ops[op.parent].start_ns);
      stop = std::min(stop, end[op.parent]);
    }
    end[op.id] = std::max(start, stop);
    auto c = copy_of.find(op.id);
    write_op_slice(w, r, op, c == copy_of.end() ? nullptr : c->second, start, end[op.id], described);
  }
  return end;
}

// Counter tracks: running totals at the end of each top-level op, and the bytes copied at the
// end of each copy.
void write_counter_tracks(EventWriter& w, const Report& r, const std::vector<int64_t>& end) {
  std::vector<std::string> names;
  for (const CounterStatus* s : r.run.measured_counters())
    names.push_back(s->sampled() ? s->event + " (sampled estimate)" : s->event);
  std::vector<double> total(names.size(), 0.0);
  auto counter = [&](const std::string& name, int64_t at_ns, double value) {
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("value").real(value).end('}');
    o.key("name").str(name).key("ph").str("C").key("pid").num(kPid).key("ts").real(us(at_ns)).end('}');
    w.done_one();
  };
  for (const OpEvent& op : r.ops) {
    if (op.parent >= 0) continue;
    for (size_t k = 0; k < names.size() && k < op.counters.size(); ++k) {
      total[k] += op.counters[k].scaled;
      counter(names[k], end[op.id], total[k]);
    }
  }
  double copied = 0;
  for (const CopyRecord& c : r.copies) {
    copied += static_cast<double>(c.bytes);
    counter("bytes copied", end[c.op], copied);
  }
}

// Each hazard as an instant event ("i", on its op's thread) where its op starts.
void write_hazard_marks(EventWriter& w, const Report& r) {
  for (const Hazard& h : r.hazards) {
    if (h.op < 0 || h.op >= static_cast<int64_t>(r.ops.size())) continue;
    const OpEvent& op = r.ops[h.op];
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("certainty").str(h.certainty).key("text").str(hazard_text(h)).end('}');
    o.key("cat").str("hazard").key("name").str("hazard: " + hazard_kind_words(h.kind));
    o.key("ph").str("i").key("pid").num(kPid).key("s").str("t").key("tid").num(op.thread);
    o.key("ts").real(us(op.start_ns)).end('}');
    w.done_one();
  }
}

// The what-if's plain calls (measured), in a process of their own whose clock starts at the
// first round: one track per variant (the baseline's two calls a round on one), each call a
// slice with its round.
void write_what_if_calls(EventWriter& w, const WhatIfRun& what_if) {
  if (what_if.calls.empty()) return;
  const int pid = kPid + 1;
  {
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("name");
    o.str("what-if: plain calls after the recording (time from the first round)").end('}');
    o.key("name").str("process_name").key("ph").str("M").key("pid").num(pid).end('}');
  }
  auto lane_of = [](const RoundCall& c) { return c.who == "baseline again" ? std::string("baseline") : c.who; };
  std::map<std::string, int64_t> track;
  for (const RoundCall& c : what_if.calls) {
    const std::string lane = lane_of(c);
    if (track.count(lane)) continue;
    const int64_t tid = static_cast<int64_t>(track.size()) + 1;
    track[lane] = tid;
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("name").str(lane).end('}');
    o.key("name").str("thread_name").key("ph").str("M").key("pid").num(pid).key("tid").num(tid).end('}');
  }
  for (const RoundCall& c : what_if.calls) {
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("round").num(c.round + 1).key("who").str(c.who).end('}');
    o.key("cat").str("what-if").key("dur").real(us(c.ns)).key("name").str(c.who);
    o.key("ph").str("X").key("pid").num(pid).key("tid").num(track[lane_of(c)]);
    o.key("ts").real(us(c.start_ns)).end('}');
    w.done_one();
  }
}

// The backend pass's oneDNN primitives on a track of their own ("X" slices, tid kPrimitiveTid):
// each at its op's start in the shown call, laid end to end with its own duration as oneDNN's
// clock measured it in the pass's call (another call: placed, not timed here).
constexpr int64_t kPrimitiveTid = 1000000;

void write_backend_primitives(EventWriter& w, const Report& r) {
  if (!r.backend.ran() || r.backend.calls.empty()) return;
  {
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("name");
    o.str("oneDNN primitives (backend pass: their own clock, placed at their op's start)").end('}');
    o.key("name").str("thread_name").key("ph").str("M").key("pid").num(kPid).key("tid").num(kPrimitiveTid).end('}');
  }
  std::map<int64_t, int64_t> next;  // op id -> where its next primitive starts
  for (const BackendCall& c : r.backend.calls) {
    if (c.op < 0 || c.op >= static_cast<int64_t>(r.ops.size())) continue;
    const OpEvent& op = r.ops[c.op];
    int64_t& at = next.emplace(c.op, op.start_ns).first->second;
    const int64_t dur = c.p.ms > 0 ? static_cast<int64_t>(c.p.ms * 1e6) : 0;
    JsonOut o = w.next();
    o.begin('{').key("args").begin('{').key("op").str(op.name).key("module").str(op.module);
    o.key("impl").str(c.p.impl).key("problem").str(c.p.problem);
    if (c.role != ReorderRole::none) o.key("role").str(reorder_role_name(c.role)).key("from").str(c.from()).key("to").str(c.to());
    o.end('}');
    o.key("cat").str("backend,onednn").key("dur").real(us(dur));
    o.key("name").str(c.role == ReorderRole::none ? c.p.kind : c.p.kind + " (" + reorder_role_name(c.role) + ")");
    o.key("ph").str("X").key("pid").num(kPid).key("tid").num(kPrimitiveTid).key("ts").real(us(at)).end('}');
    w.done_one();
    at += dur;
  }
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Report& r) {
  require_whole_report(r);
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":"
      << dump_compact({{"tool", "layoutprof"}, {"model", r.run.model}, {"status", to_string(r.run.status)}})
      << ",\"traceEvents\":[";
  EventWriter w(out);
  write_names(w, r);
  const std::vector<int64_t> end = write_op_slices(w, r);
  write_counter_tracks(w, r, end);
  write_hazard_marks(w, r);
  write_backend_primitives(w, r);
  write_what_if_calls(w, r.what_if);
  w.flush();
  out << "\n]}\n";
}

json chrome_trace(const Report& r) {
  std::ostringstream text;
  write_chrome_trace(text, r);
  return json::parse(text.str());
}

namespace {

class TraceReporter : public Reporter {
 public:
  std::string name() const override { return "trace"; }
  bool writes_reports() const override { return true; }
  void write(std::ostream& out, const Report& r, const ReporterOptions&) const override { write_chrome_trace(out, r); }
};

}  // namespace

std::unique_ptr<Reporter> make_trace_reporter() { return std::make_unique<TraceReporter>(); }

}  // namespace layoutprof
