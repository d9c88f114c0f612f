// layoutprof._native: the in-process recording session (src/eager) for the Python package.
// Python drives it: layoutprof/profile.py begins and ends each recorded call, and its module
// hooks tell ModuleSites which module is running; user_frames reads each op's source line.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/jit/ir/ir.h>      // torch::jit::Graph: a class torch binds
#include <torch/csrc/utils/pybind.h>  // at::Tensor from and to Python

#include <memory>
#include <string>

#include "analysis/paired_rounds.h"
#include "analysis/what_if_plan.h"
#include "core/layout.h"
#include "core/pools.h"
#include "eager/module_sites.h"
#include "eager/session.h"
#include "record/callbacks.h"
#include "runner/model.h"
#include "support/errors.h"
#include "user_frames.h"

namespace py = pybind11;
using namespace layoutprof;

namespace {

std::shared_ptr<EagerSession> new_session(const std::string& name, const std::string& torch_version, int threads,
                                          bool autograd, int warmup, int64_t max_ops, int64_t recent_ops,
                                          bool counters, const std::vector<std::string>& events, bool gpu) {
  EagerOptions o;
  o.name = name;
  o.torch_version = torch_version;
  o.threads = threads;
  o.autograd = autograd;
  o.warmup = warmup;
  o.max_ops = max_ops;
  o.recent_ops = recent_ops;
  o.counters = counters;
  o.events = events;
  o.gpu = gpu;
  return std::make_shared<EagerSession>(o);
}

// A report handed to Python holds the pools' epoch its names were interned in (core/pools.h):
// they outlive the session for as long as the report lives, and no longer.
struct LeasedReport {
  PoolLease pools;
  Report report;
};

std::shared_ptr<Report> finish(EagerSession& session) {
  py::gil_scoped_release unlocked;  // the analysis takes no Python object
  auto held = std::make_shared<LeasedReport>(LeasedReport{PoolLease(), session.finish()});
  return std::shared_ptr<Report>(held, &held->report);
}

// What the pools and module sites hold now (tests: a long-running process's memory is bounded).
py::dict pools_now() {
  const PoolCounts c = pool_counts();
  py::dict d;
  d["strings"] = c.strings;
  d["string_bytes"] = c.string_bytes;
  d["shapes"] = c.shapes;
  d["shape_bytes"] = c.shape_bytes;
  d["site_names"] = module_sites().names();
  d["leases"] = pool_leases();
  return d;
}

using NamedPairs = std::vector<std::pair<std::string, at::Tensor>>;

// (name, tensor) pairs as named_parameters() and named_buffers() give them.
std::vector<NamedTensor> named_tensors(const NamedPairs& named) {
  std::vector<NamedTensor> out;
  for (const auto& [name, tensor] : named) out.push_back({name, tensor});
  return out;
}

void watch_parameters(EagerSession& session, const NamedPairs& named) { session.watch_parameters(named_tensors(named)); }

void note_model_tensors(EagerSession& session, const NamedPairs& parameters, const NamedPairs& buffers) {
  session.note_model_tensors(named_tensors(parameters), named_tensors(buffers));
}

// A variant's rounds against the baseline's, as a dict (layoutprof/_what_if.py reads it).
py::dict rounds_dict(const PairedRounds& p) {
  py::dict d;
  d["rounds"] = p.rounds;
  d["level"] = p.level;
  d["baseline_median_ns"] = p.baseline_median_ns;
  d["variant_median_ns"] = p.variant_median_ns;
  d["difference_ns"] = p.difference_ns;
  d["low_ns"] = p.low_ns;
  d["high_ns"] = p.high_ns;
  d["coverage"] = p.coverage;
  d["relative"] = p.relative();
  d["saving"] = saving_name(p.saving);
  d["text"] = p.text();
  return d;
}

// The control's verdict and each variant's (analysis/paired_rounds.h: judge_rounds).
py::tuple judge(const std::vector<int64_t>& baseline, const std::vector<int64_t>& again,
                const std::vector<std::vector<int64_t>>& variants) {
  const RoundsVerdict v = judge_rounds(baseline, again, variants);
  py::list judged;
  for (const PairedRounds& p : v.variants) judged.append(rounds_dict(p));
  return py::make_tuple(rounds_dict(v.control), judged);
}

// A fix's action as the JSON report writes it (report/cause_json.cpp), a dict.
py::dict action_dict(const FixAction& a) {
  py::dict d;
  d["kind"] = fix_kind_name(a.kind);
  d["op"] = a.op;
  d["where"] = a.where;
  d["format"] = a.format;
  d["input"] = a.input < 0 ? py::object(py::none()) : py::object(py::int_(a.input));
  d["tensor"] = a.tensor;
  d["not_applied"] = a.not_applied;
  return d;
}

// The variants the what-if measures (analysis/what_if_plan.h): [{"name", "actions", "causes"}].
py::list what_if_plans_of(const Report& r, int top) {
  py::list plans;
  for (const VariantPlan& p : what_if_plans(r, top)) {
    py::dict d;
    py::list actions;
    for (const FixAction& a : p.actions) actions.append(action_dict(a));
    d["name"] = p.name;
    d["actions"] = actions;
    d["causes"] = p.causes;
    plans.append(d);
  }
  return plans;
}

void write_report(const Report& report, const std::string& format, const std::string& path) {
  py::gil_scoped_release unlocked;
  write_report_file(report, format, path);
}

void begin_call(EagerSession& s, const std::vector<at::Tensor>& arguments) {
  std::vector<NamedTensor> named;
  for (const at::Tensor& t : arguments) named.push_back({"", t});
  s.begin_call(named);
}

py::object maker_of(const EagerSession& s, const at::Tensor& t) {
  const std::optional<ViewMaker> made = s.maker_of({"", t});
  if (!made) return py::none();
  return py::make_tuple(made->op, made->where, made->code);
}

// layoutprof._native.Session: the recording session profile.py drives.
void bind_session(py::module_& m) {
  py::class_<EagerSession, std::shared_ptr<EagerSession>>(m, "Session")
      .def(py::init(&new_session), py::arg("name"), py::arg("torch_version"), py::arg("threads"),
           py::arg("autograd"), py::arg("warmup"), py::arg("max_ops") = 0,
           py::arg("recent_ops") = 4096, py::arg("counters") = true,
           py::arg("events") = std::vector<std::string>{}, py::arg("gpu") = true)
      .def("begin_call", &begin_call, py::arg("arguments") = std::vector<at::Tensor>{})
      .def("maker_of", &maker_of, py::arg("tensor"),
           "(op, 'file:line', code) of the recorded op that made the tensor's view, or None")
      .def("end_call", &EagerSession::end_call, py::arg("error") = "")
      .def("drop_call", &EagerSession::drop_call)
      .def("fail", &EagerSession::fail, py::arg("error"))
      .def("interrupt", &EagerSession::interrupt, py::arg("signal"))
      .def("not_stopped", &EagerSession::not_stopped, py::arg("when"))
      .def("pause_gpu", &EagerSession::pause_gpu, py::arg("why"))
      .def("resume_gpu", &EagerSession::resume_gpu)
      .def("describe_model", &EagerSession::describe_model, py::arg("name"), py::arg("mode"))
      .def("accept", &EagerSession::accept, py::arg("places"))
      .def("note_input", [](EagerSession& s, const at::Tensor& t, const std::string& origin) { s.note_input({origin, t}); },
           py::arg("tensor"), py::arg("origin"))
      .def("watch_parameters", &watch_parameters, py::arg("named"))
      .def("note_model_tensors", &note_model_tensors, py::arg("parameters"), py::arg("buffers"))
      .def("note_output", [](EagerSession& s, const at::Tensor& t) { s.note_output({"", t}); }, py::arg("tensor"))
      .def("note_gradient_warning", &EagerSession::note_gradient_warning, py::arg("line"))
      .def("note_ddp_buckets", &EagerSession::note_ddp_buckets, py::arg("strides"), py::arg("built"))
      .def("note_compiled", &EagerSession::note_compiled, py::arg("json"))
      .def("note_layout_warning", &EagerSession::note_layout_warning, py::arg("where"), py::arg("code"),
           py::arg("text"))
      .def_property_readonly("in_call", &EagerSession::in_call)
      .def_property_readonly("calls", &EagerSession::calls)
      .def("finish", &finish);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "layoutprof's recorder, analysis and reporters, in process";
  m.attr("version") = LAYOUTPROF_VERSION;
  m.attr("torch_version") = LAYOUTPROF_TORCH_VERSION;  // the LibTorch it was built against
  // The pybind11 internals it uses, which must be torch's: torch's bound classes (its Graph) are
  // then in its registry. Another pybind11 or compiler family keeps apart ones (the package
  // refuses that at import, in one line).
  m.attr("pybind11_internals_id") = PYBIND11_INTERNALS_ID;
  m.def("shares_torch_pybind11", [] { return py::detail::get_type_info(typeid(torch::jit::Graph)) != nullptr; });

  // layoutprof's errors carry their exit code; Python sees the message.
  static py::exception<Error> error(m, "Error");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });

  py::class_<Report, std::shared_ptr<Report>>(m, "Report")
      .def("write", &write_report, py::arg("format"), py::arg("path"),
           "writes the report whole (or not at all) to path ('-': stdout)")
      .def("text", &report_string, py::arg("format") = "text")
      .def("what_if_plans", &what_if_plans_of, py::arg("top"), "the variants a what-if of the top causes measures")
      .def("note_what_if", &note_what_if, py::arg("json"), "the what-if's measurement (_what_if.py) put into the report");

  bind_session(m);

  // The layout vocabulary (core/layout.h) for a tensor's sizes and strides: "channels_last",
  // "permuted(0,2,1)", "strided", ... (dims of size 1 never decide).
  m.def("layout_label", [](const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
    return layout_label(classify_layout(sizes, strides));
  }, py::arg("sizes"), py::arg("strides"));
  // Interleaved rounds of plain calls judged: (control, [variant, ...]), each a dict of the
  // median paired difference, its order-statistic interval and the verdict (paired_rounds.h).
  m.def("judge_rounds", &judge, py::arg("baseline_ns"), py::arg("baseline_again_ns"), py::arg("variants_ns"));
  m.def("module_id", [](const std::string& path) { return module_sites().module_id(path); });
  m.def("pools", &pools_now, "entries and bytes the interning pools hold now, and the leases on them");
  m.def("enter_module", [](uint32_t id) { module_sites().enter(id); });
  m.def("leave_module", [] { module_sites().leave(); });
  // Each recorded op's source line: the nearest frame outside torch's and layoutprof's packages.
  m.def("watch_user_lines", [](const std::string& torch_folder, const std::string& package_folder) {
    set_library_folders(torch_folder, package_folder);
    module_sites().set_source_probe(&user_source_now);
  });
  // Lines of inductor's generated code, mapped to the user's (layoutprof/_compiled_lines.py).
  m.def("translate_lines", [](py::object translator) { set_source_translator(translator.ptr()); });
  // profile(lines=False): module paths only, no line read per op.
  m.def("pause_thread", &pause_thread, py::arg("paused"));
  m.def("read_user_lines", [](bool read) { module_sites().set_source_probe(read ? &user_source_now : nullptr); });
}
