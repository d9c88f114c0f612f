// The executor's plan (what each node becomes) and its run. Three kinds of step: an op called
// through the dispatcher (every aten or custom op), SymInt arithmetic evaluated here (export
// writes Python's `_operator` functions and `aten.sym_size`, which eager PyTorch never
// dispatches either), and the higher-order ops, which run subgraphs.
#include "runner/pt2_executor.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <map>
#include <optional>

#include "runner/pt2_higher_order.h"
#include "runner/pt2_sites.h"
#include "runner/pt2_sym_functions.h"
#include "runner/pt2_values.h"
#include "support/errors.h"

namespace layoutprof {

using pt2::ArgKind;
using pt2::Argument;
using pt2::Node;

struct Pt2Step {
  virtual ~Pt2Step() = default;
  virtual void run(std::vector<c10::IValue>& env) const = 0;
  // Of the values whose last reader this step is: those it reads once as a whole argument
  // are taken (moved out of the table, not copied: a tensor's reference count is not touched);
  // the others are dropped after it.
  void take_last_uses(const std::vector<int>& last_uses);
  // Whether this step runs `op` at the source line `where`, and in which module (its site's).
  virtual bool runs(const std::string& /*op*/, const std::string& /*where*/, uint32_t& /*module*/) const {
    return false;
  }
  // A what-if's line fix on this step (Pt2Executor::fix_line), where runs() said yes.
  virtual void fix(Pt2Executor::LineFix, c10::MemoryFormat) {}

  std::vector<ArgPlan> args;  // what it reads (for an op, in its schema's order)
  std::vector<int> uses;      // the values its arguments read
  std::vector<int> frees;     // values dropped after it
};

void Pt2Step::take_last_uses(const std::vector<int>& last_uses) {
  for (int s : last_uses) {
    ArgPlan* reader = nullptr;
    if (std::count(uses.begin(), uses.end(), s) == 1)
      for (ArgPlan& a : args)
        if (a.kind == ArgPlan::Kind::Value && a.slots[0] == s) reader = &a;
    if (reader) reader->take = true;
    else frees.push_back(s);
  }
}

namespace {

// Values by name while a graph is planned: each definition gets the next slot.
class Scope {
 public:
  explicit Scope(const std::string& graph) : graph_(graph) {}
  int define(const std::string& name, const std::string& where) {
    if (!slots_.emplace(name, static_cast<int>(slots_.size())).second)
      throw ModelLoadError(where + ": value '" + bounded(name) + "' is defined twice");
    return slots_.at(name);
  }
  int use(const std::string& name, const std::string& where) const {
    auto it = slots_.find(name);
    if (it == slots_.end())
      throw ModelLoadError(where + ": value '" + bounded(name) + "' is used before it is defined");
    return it->second;
  }
  size_t size() const { return slots_.size(); }

 private:
  std::string graph_;
  std::map<std::string, int> slots_;
};

std::string where(const Node& node) { return "node '" + bounded(node.target) + "'"; }

// Planned arguments, by the graph's value slots.
ArgPlan plan(const Argument& arg, const Scope& scope, const std::string& at) {
  return plan_argument(arg, [&](const std::string& name) { return scope.use(name, at); }, at);
}

// Plans the next argument of `step`, noting the values it reads.
ArgPlan& plan_for(Pt2Step& step, const Argument& arg, const Scope& scope, const std::string& at) {
  ArgPlan p = plan(arg, scope, at);
  for (int s : p.slots)
    if (s >= 0) step.uses.push_back(s);
  step.args.push_back(std::move(p));
  return step.args.back();
}

// Where a step's results go: one slot per named output; a list output spreads over its names.
struct OutputBinding {
  std::vector<int> slots;  // -1: nothing to keep (a None)
  bool spread = false;     // the result is a list whose elements are `slots`
};

OutputBinding bind(const Argument& out, Scope& scope, const std::string& at) {
  OutputBinding b;
  switch (out.kind) {
    case ArgKind::None: b.slots = {-1}; break;
    case ArgKind::Tensors:
    case ArgKind::OptionalTensors:
      b.spread = true;
      for (const std::string& n : out.names) b.slots.push_back(n.empty() ? -1 : scope.define(n, at));
      break;
    case ArgKind::Tensor: case ArgKind::SymInt: case ArgKind::SymBool: case ArgKind::SymFloat:
    case ArgKind::OptionalTensor: case ArgKind::CustomObj:
      b.slots = {out.names.empty() || out.names[0].empty() ? -1 : scope.define(out.names[0], at)};
      break;
    default:
      throw ModelLoadError(at + ": an output of kind " + pt2::arg_kind_field(out.kind) + " is not supported");
  }
  return b;
}

void store(const OutputBinding& b, c10::IValue value, std::vector<c10::IValue>& env) {
  if (!b.spread) {
    if (b.slots[0] >= 0) env[b.slots[0]] = std::move(value);
    return;
  }
  const auto list = value.toList();
  for (size_t i = 0; i < b.slots.size() && i < list.size(); ++i)
    if (b.slots[i] >= 0) env[b.slots[i]] = list.get(i);
}

// A node's results as one value per output argument: a node with one list output gets the
// op's list; one output per return otherwise.
void store_results(const std::vector<OutputBinding>& outs, std::vector<c10::IValue>& results,
                   std::vector<c10::IValue>& env) {
  if (outs.size() == 1 && results.size() == 1 && !outs[0].spread) {  // most ops: one tensor
    if (outs[0].slots[0] >= 0) env[outs[0].slots[0]] = std::move(results[0]);
    return;
  }
  if (outs.size() == 1 && results.size() > 1 && outs[0].spread) {
    for (size_t i = 0; i < outs[0].slots.size() && i < results.size(); ++i)
      if (outs[0].slots[i] >= 0) env[outs[0].slots[i]] = std::move(results[i]);
    return;
  }
  for (size_t i = 0; i < outs.size() && i < results.size(); ++i) store(outs[i], std::move(results[i]), env);
}

// --- ops through the dispatcher --------------------------------------------------------------

struct OpStep final : Pt2Step {
  c10::OperatorHandle op;
  std::vector<OutputBinding> outs;
  SiteId site;
  Pt2Sites* sites;
  const c10::Device* device;

  // What-if: the first two operands swapped, the first result made dense in `dense`.
  bool swap = false;
  std::optional<c10::MemoryFormat> dense;

  OpStep(c10::OperatorHandle handle) : op(std::move(handle)) {}
  void run(std::vector<c10::IValue>& env) const override {
    // One stack per step, kept: a graph runs on one thread, and a step never runs inside itself.
    stack.clear();
    for (const ArgPlan& a : args) stack.emplace_back(materialize(a, env, *device));
    if (swap && stack.size() >= 2) std::swap(stack[0], stack[1]);
    sites->set_current(site);
    op.callBoxed(&stack);
    if (dense && !stack.empty() && stack[0].isTensor()) stack[0] = stack[0].toTensor().contiguous(*dense);
    store_results(outs, stack, env);
    stack.clear();
  }
  bool runs(const std::string& name, const std::string& where, uint32_t& module) const override {
    module = site.module;
    return op.schema().name() == name && sites->source_line(site.source).location == where;
  }
  void fix(Pt2Executor::LineFix how, c10::MemoryFormat format) override {
    if (how == Pt2Executor::LineFix::swap) swap = true;
    else dense = format;
  }
  mutable torch::jit::Stack stack;
};

// "torch.ops.NS.NAME.OVERLOAD" -> ("NS::NAME", OVERLOAD), "default" being "".
std::optional<c10::OperatorName> operator_name(const std::string& target) {
  const std::string prefix = "torch.ops.";
  if (target.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string rest = target.substr(prefix.size());
  auto ns_end = rest.find('.');
  auto overload_at = rest.rfind('.');
  if (ns_end == std::string::npos || overload_at == ns_end) return std::nullopt;
  std::string overload = rest.substr(overload_at + 1);
  if (overload == "default") overload.clear();
  return c10::OperatorName(rest.substr(0, ns_end) + "::" + rest.substr(ns_end + 1, overload_at - ns_end - 1),
                           overload);
}

bool takes_tensor(const c10::Argument& formal) {
  c10::TypePtr type = formal.type();
  if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  return type->kind() == c10::TypeKind::TensorType;
}

bool is_tensor_kind(ArgKind kind) {
  return kind == ArgKind::Tensor || kind == ArgKind::OptionalTensor || kind == ArgKind::None;
}

std::unique_ptr<Pt2Step> op_step(const Node& node, Scope& scope, Pt2Sites& sites, const SiteContext& context,
                                 const c10::Device* device) {
  const std::string at = where(node);
  auto name = operator_name(node.target);
  if (!name) throw ModelLoadError(at + ": a node kind layoutprof does not run");
  auto handle = c10::Dispatcher::singleton().findSchema(*name);
  if (!handle) {
    const bool aten = name->name.rfind("aten::", 0) == 0;
    throw ModelLoadError(at + ": this LibTorch has no op " + name->name +
                         (name->overload_name.empty() ? "" : "." + name->overload_name) +
                         (aten ? " (the program needs a newer PyTorch)"
                               : " (a custom op: load its library with --load-library FILE.so)"));
  }
  auto step = std::make_unique<OpStep>(*handle);
  std::map<std::string, const Argument*> given;
  for (const pt2::NamedArgument& in : node.inputs) given[in.name] = &in.arg;
  for (const c10::Argument& formal : handle->schema().arguments()) {
    auto it = given.find(formal.name());
    if (it != given.end()) {
      ArgPlan& arg = plan_for(*step, *it->second, scope, at + " argument '" + formal.name() + "'");
      arg.number_as_tensor = takes_tensor(formal) && !is_tensor_kind(it->second->kind);
      prepare_constant(arg);
    }
    else if (formal.default_value()) step->args.push_back(constant_plan(*formal.default_value()));
    else throw ModelLoadError(at + ": argument '" + formal.name() + "' is missing");
  }
  for (const Argument& out : node.outputs) step->outs.push_back(bind(out, scope, at));
  step->site = sites.intern(node, context);
  step->sites = &sites;
  step->device = device;
  return step;
}

// --- SymInt arithmetic and size queries (pt2_sym_functions) ---------------------------------

struct SymStep final : Pt2Step {
  SymFn fn;
  OutputBinding out;
  const c10::Device* device;
  void run(std::vector<c10::IValue>& env) const override {
    std::vector<c10::IValue> values;
    for (const ArgPlan& a : args) values.push_back(materialize(a, env, *device));
    store(out, fn(values), env);
  }
};

std::unique_ptr<Pt2Step> sym_step(const Node& node, const SymFn& fn, Scope& scope, const c10::Device* device) {
  const std::string at = where(node);
  auto step = std::make_unique<SymStep>();
  step->fn = fn;
  for (const pt2::NamedArgument& in : node.inputs) plan_for(*step, in.arg, scope, at);
  if (node.outputs.size() != 1) throw ModelLoadError(at + ": a size computation with " + std::to_string(node.outputs.size()) + " outputs");
  step->out = bind(node.outputs[0], scope, at);
  step->device = device;
  return step;
}

// --- higher-order ops: subgraphs (pt2_higher_order) ------------------------------------------

struct HopStep final : Pt2Step {
  HopFn fn = nullptr;
  Subgraphs graphs;  // its args: the arguments that are not graphs
  std::vector<OutputBinding> outs;
  const c10::Device* device = nullptr;
  void run(std::vector<c10::IValue>& env) const override {
    std::vector<c10::IValue> values;
    for (const ArgPlan& a : args) values.push_back(materialize(a, env, *device));
    std::vector<c10::IValue> results = fn(graphs, values);
    store_results(outs, results, env);
  }
};

SiteContext inside(const SiteContext& outer, const std::string& module, const std::string& graph) {
  return {module, outer.within.empty() ? graph : outer.within + " > " + graph};
}

}  // namespace

// How an executor plans a graph: nested graphs share the sites and the device.
struct Pt2Executor::Planner {
  static std::unique_ptr<Pt2Step> hop_step(const Node& node, const HopKind& kind, Scope& scope, Pt2Sites& sites,
                                           const SiteContext& context, const std::shared_ptr<c10::Device>& device) {
    const std::string at = where(node);
    const auto given = std::count_if(node.inputs.begin(), node.inputs.end(),
                                     [](const pt2::NamedArgument& in) { return in.arg.kind == ArgKind::Graph; });
    if (static_cast<size_t>(given) != kind.graphs.size())
      throw ModelLoadError(at + ": takes " + std::to_string(kind.graphs.size()) + " subgraphs, the node gives " +
                           std::to_string(given));
    auto step = std::make_unique<HopStep>();
    step->fn = kind.fn;
    step->device = device.get();
    for (const pt2::NamedArgument& in : node.inputs) {
      if (in.arg.kind != ArgKind::Graph) plan_for(*step, in.arg, scope, at);
      else if (!in.arg.graph) throw ModelLoadError(at + ": a subgraph argument without its graph");
      else step->graphs.push_back(std::unique_ptr<Pt2Executor>(new Pt2Executor(
               *in.arg.graph, sites, device,
               inside(context, sites.module_of(node, context), kind.graphs[step->graphs.size()]))));
    }
    for (const Argument& out : node.outputs) step->outs.push_back(bind(out, scope, at));
    return step;
  }

  static std::unique_ptr<Pt2Step> node_step(const Node& node, Scope& scope, Pt2Sites& sites,
                                            const SiteContext& context, const std::shared_ptr<c10::Device>& device) {
    auto sym = sym_functions().find(node.target);
    if (sym != sym_functions().end()) return sym_step(node, sym->second, scope, device.get());
    auto hop = higher_order_ops().find(node.target);
    if (hop != higher_order_ops().end()) return hop_step(node, hop->second, scope, sites, context, device);
    if (node.target.rfind("torch.ops.higher_order.", 0) == 0)
      throw ModelLoadError(where(node) + ": a higher-order op layoutprof does not run");
    return op_step(node, scope, sites, context, device.get());
  }

  static bool named(const Argument& a) { return !a.names.empty() && !a.names[0].empty(); }
};

Pt2Executor::Pt2Executor(const pt2::Graph& graph, Pt2Sites& sites)
    : Pt2Executor(graph, sites, std::make_shared<c10::Device>(c10::kCPU), SiteContext{}) {}

Pt2Executor::Pt2Executor(const pt2::Graph& graph, Pt2Sites& sites, std::shared_ptr<c10::Device> device,
                         const SiteContext& context)
    : device_(std::move(device)) {
  Scope scope("graph");
  for (const Argument& in : graph.inputs)
    input_slots_.push_back(Planner::named(in) ? scope.define(in.names[0], "graph input") : -1);
  for (const Node& node : graph.nodes) {
    try {
      steps_.push_back(Planner::node_step(node, scope, sites, context, device_));
    } catch (const std::out_of_range&) {
      throw ModelLoadError(where(node) + ": an argument without its value");
    }
  }
  for (const Argument& out : graph.outputs) {
    const bool value = out.kind == ArgKind::Tensor || out.kind == ArgKind::SymInt || out.kind == ArgKind::SymFloat ||
                       out.kind == ArgKind::SymBool || out.kind == ArgKind::OptionalTensor;
    output_slots_.push_back(value && Planner::named(out) ? scope.use(out.names[0], "graph output") : -1);
    std::vector<c10::IValue> no_values;
    output_constants_.push_back(output_slots_.back() >= 0
                                    ? c10::IValue()
                                    : materialize(plan(out, scope, "graph output"), no_values, *device_));
  }
  slots_ = scope.size();
  plan_frees();
}

Pt2Executor::~Pt2Executor() = default;
Pt2Executor::Pt2Executor(Pt2Executor&&) noexcept = default;

// Each value is released by the last step reading it (not the graph's outputs), as eager
// PyTorch frees a temporary: the peak memory of a run is the program's, not every value's.
void Pt2Executor::plan_frees() {
  std::vector<int> last(slots_, -1);
  for (size_t i = 0; i < steps_.size(); ++i)
    for (int s : steps_[i]->uses) last[s] = static_cast<int>(i);
  for (int s : output_slots_)
    if (s >= 0) last[s] = -1;
  std::vector<std::vector<int>> last_uses(steps_.size());
  for (size_t s = 0; s < last.size(); ++s)
    if (last[s] >= 0) last_uses[last[s]].push_back(static_cast<int>(s));
  for (size_t i = 0; i < steps_.size(); ++i) steps_[i]->take_last_uses(last_uses[i]);
}

int Pt2Executor::fix_line(LineFix how, const std::string& op, const std::string& where, c10::MemoryFormat format) {
  std::vector<Pt2Step*> found;
  std::map<uint32_t, int> per_module;  // a line runs once per module it is in (a block's class, twice)
  for (const auto& step : steps_) {
    uint32_t module = 0;
    if (!step->runs(op, where, module)) continue;
    found.push_back(step.get());
    if (++per_module[module] > 1) return -1;  // two alike on the line: not one to change
  }
  for (Pt2Step* step : found) step->fix(how, format);
  return static_cast<int>(found.size());
}

std::vector<c10::IValue> Pt2Executor::run(std::vector<c10::IValue> inputs) const {
  if (inputs.size() != input_slots_.size())
    throw std::invalid_argument("the graph takes " + std::to_string(input_slots_.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  std::vector<c10::IValue> env(slots_);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (input_slots_[i] >= 0) env[input_slots_[i]] = std::move(inputs[i]);
  for (const auto& step : steps_) {
    step->run(env);
    for (int s : step->frees) env[s] = c10::IValue();
  }
  std::vector<c10::IValue> outputs;
  for (size_t i = 0; i < output_slots_.size(); ++i)
    outputs.push_back(output_slots_[i] >= 0 ? env[output_slots_[i]] : output_constants_[i]);
  return outputs;
}

}  // namespace layoutprof
