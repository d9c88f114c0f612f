#include "layoutprof/chrome_trace.h"

#include <map>

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

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

json chrome_trace(const Report& r) {
  json events = json::array();
  const int pid = 1;
  events.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"},
                    {"args", {{"name", "layoutprof: " + r.run.model}}}});
  std::map<uint32_t, bool> threads;
  for (const OpEvent& op : r.ops) threads[op.thread] = true;
  for (const auto& [tid, unused] : threads)
    events.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"},
                      {"args", {{"name", tid == 0 ? std::string("forward() caller")
                                                   : "intra-op thread " + std::to_string(tid)}}}});

  std::map<int64_t, const CopyRecord*> copy_of;
  for (const CopyRecord& c : r.copies) copy_of[c.op] = &c;

  // Durations are medians over calls and starts come from one call: clamp each slice into
  // its parent so that slices nest as the viewers require.
  std::vector<int64_t> end(r.ops.size());
  for (const OpEvent& op : r.ops) {
    int64_t start = op.start_ns;
    int64_t stop = op.start_ns + op.duration_ns;
    if (op.parent >= 0 && r.ops[op.parent].thread == op.thread) {
      start = std::max(start, r.ops[op.parent].start_ns);
      stop = std::min(stop, end[op.parent]);
    }
    end[op.id] = std::max(start, stop);
    json inputs = json::array(), outputs = json::array();
    for (const TensorInfo& t : op.inputs) inputs.push_back(describe(t));
    for (const TensorInfo& t : op.outputs) outputs.push_back(describe(t));
    json args = {{"id", op.id}, {"module", op.module}, {"source", op.source},
                 {"inputs", inputs}, {"outputs", outputs}};
    std::string name = op.name, cat = "op";
    auto c = copy_of.find(op.id);
    if (c != copy_of.end()) {
      name = "copy [" + std::string(copy_class_name(c->second->cls)) + "]";
      cat = std::string("copy,") + copy_class_name(c->second->cls);
      args["bytes"] = c->second->bytes;
      args["culprit"] = r.ops[c->second->culprit].name;
      args["dtlb_walks_modelled"] = c->second->dtlb.walks;
    }
    if (op.failed) args["failed"] = true;
    if (op.gpu_ns >= 0) {  // GPU runs: what this op launched (CUPTI, measured)
      args["gpu_ns"] = op.gpu_ns;
      args["gpu_launches"] = op.gpu_launches;
      args["copy_gpu_ns"] = op.copy_gpu_ns;
      args["kernels"] = op.kernels;
    }
    events.push_back({{"ph", "X"}, {"pid", pid}, {"tid", op.thread}, {"name", name}, {"cat", cat},
                      {"ts", us(start)}, {"dur", us(end[op.id] - start)}, {"args", args}});
  }

  // Counter tracks: running totals at the end of each top-level op.
  std::vector<std::string> names;
  for (const CounterStatus* s : r.run.measured_counters()) names.push_back(s->event);
  std::vector<double> total(names.size(), 0.0);
  double copied = 0;
  for (const OpEvent& op : r.ops) {
    if (op.parent >= 0) continue;
    for (size_t k = 0; k < names.size() && k < op.counters.size(); ++k) {
      total[k] += op.counters[k].scaled;
      events.push_back({{"ph", "C"}, {"pid", pid}, {"name", names[k]}, {"ts", us(end[op.id])},
                        {"args", {{"value", total[k]}}}});
    }
  }
  for (const CopyRecord& c : r.copies) {
    copied += static_cast<double>(c.bytes);
    events.push_back({{"ph", "C"}, {"pid", pid}, {"name", "bytes copied"}, {"ts", us(end[c.op])},
                      {"args", {{"value", copied}}}});
  }
  return json{{"traceEvents", events},
              {"displayTimeUnit", "ns"},
              {"otherData", {{"tool", "layoutprof"}, {"model", r.run.model}, {"status", r.run.status}}}};
}

}  // namespace layoutprof
