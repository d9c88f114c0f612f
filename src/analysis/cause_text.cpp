#include "analysis/cause_text.h"

#include "analysis/backend_conversions.h"

#include <algorithm>

#include "analysis/compiled_code.h"
#include "analysis/hazards.h"
#include "analysis/verdict.h"
#include "core/input_spec.h"
#include "support/format.h"

namespace layoutprof {

namespace {

bool is_channels_last(const std::string& label) { return label == "channels_last" || label == "channels_last_3d"; }

std::string code_of(const LayoutCause& c) { return c.code.empty() ? "" : " (`" + c.code + "`)"; }

// " in stages.1.downsample.0 and 2 more", "" for the top module alone.
std::string modules_text(const LayoutCause& c) {
  std::vector<std::string> named;
  for (const std::string& m : c.modules) named.push_back(m.empty() ? "(top)" : m);
  if (named.empty() && !c.module.empty()) named.push_back(c.module);
  if (named.empty() || (named.size() == 1 && named[0] == "(top)")) return "";
  return " in " + list_text(named, 1);
}

std::string place(const std::string& where) { return where.empty() ? "" : " at " + where; }

// The memory format the model's weights want for data of this layout's rank.
std::string wanted_format(MemoryFormat model_format, const std::string& layout) {
  if (model_format != MemoryFormat::nhwc) return "contiguous";
  return layout == "channels_last_3d" ? "channels_last_3d" : "channels_last";
}

std::string contiguous_call(const std::string& format) {
  return format == "contiguous" ? ".contiguous()" : ".contiguous(memory_format=torch." + format + ")";
}

const OpEvent* failed_view(const LayoutCause& c, const Report& r) {
  for (int64_t id : c.payers)
    if (id < static_cast<int64_t>(r.ops.size()) && r.ops[id].failed) return &r.ops[id];
  return nullptr;
}

// A layout born in the backward pass, by the autograd function of a forward op: gradients
// come with no layout guarantee (PyTorch's documented rule), so it is enforced where the
// gradient is read, in the user's backward function or a hook on the forward's result.
std::string fix_in_backward(const LayoutCause& c, const Report& r, const std::string& function,
                            MemoryFormat model_format) {
  const std::string gradient = "the gradient of " + (c.where.empty() ? "its forward op" : c.where + code_of(c));
  const std::string why = ": gradients have no layout guarantee, and " + function + " returns " + gradient + " " +
                          c.layout;
  if (const OpEvent* view = failed_view(c, r))
    return "`.reshape(...)` instead of `.view(...)` at " + view->source.str() +
           ", or `.contiguous()` on the gradient before the view" + why;
  // A memory format the model's weights are not in (a convolution's backward choosing NCHW in a
  // channels_last model) is asked for in the weights' format, anything else dense.
  const bool memory_format = is_channels_last(c.layout) || (c.layout == "contiguous" && model_format == MemoryFormat::nhwc);
  const std::string call = memory_format ? contiguous_call(wanted_format(model_format, c.layout)) : ".contiguous()";
  return "`" + call + "` on the gradient where the code reads it (in a custom autograd.Function's backward), or a "
         "hook on the forward's result" + place(c.where) + ", `t.register_hook(lambda g: g" + call + ")`" + why;
}

// A birthplace whose only cost is the explicit copy its own line asks for (`x.t().contiguous()`):
// the fix is already there, and asking for it again changes nothing.
bool already_dense(const LayoutCause& c, const Report& r) {
  return c.explicit_copies > 0 && c.copies == 0 && c.mixed_ops == 0 && c.gradients.empty() && !failed_view(c, r) &&
         c.code.find(".contiguous(") != std::string::npos;
}

// A line of an installed package (site-packages, dist-packages): not the user's to change.
bool in_installed_package(const std::string& where) {
  return where.find("/site-packages/") != std::string::npos || where.find("/dist-packages/") != std::string::npos;
}

// A layout an installed package's code makes: followed to the user's line that runs it (the
// model call, in process), with what the user can change there.
std::string fix_in_library(const LayoutCause& c, const Report& r) {
  std::string call;
  for (const ModelInput& in : r.run.inputs)
    if (call.empty() && in.origin.find(" of the model call at ") != std::string::npos)
      call = in.origin.substr(in.origin.find(" of ") + 4);
  const std::string module = c.modules.empty() ? "" : " (module " + c.modules.front() + ")";
  const std::string function = backward_function(c.op_name);
  const std::string what = function.empty() ? c.op_name + place(c.where) + module
                                            : function + "'s gradient of " + c.where + module;
  return "not a line to change: " + what + " is an installed package's code" +
         (call.empty() ? "" : ", run by " + call) + "; what reaches it from your code (the input's layout, the "
         "model's format) is yours to change, the library's own layout choice is its maintainers' to report to";
}

// Which of the fixes at an op a cause gets: the one decision both its sentence (fix_at_op) and
// its action (action_at_op) follow.
enum class OpFix { compiled, library, backward, already_dense, failed_view, memory_format, plain };

OpFix op_fix(const LayoutCause& c, const Report& r, MemoryFormat model_format) {
  if (is_compiled_code(c.op_name)) return OpFix::compiled;
  if (in_installed_package(c.where)) return OpFix::library;
  if (!backward_function(c.op_name).empty()) return OpFix::backward;
  if (already_dense(c, r)) return OpFix::already_dense;
  if (failed_view(c, r)) return OpFix::failed_view;
  if (is_channels_last(c.layout) || (c.layout == "contiguous" && model_format == MemoryFormat::nhwc))
    return OpFix::memory_format;
  return OpFix::plain;
}

// The op that writes in place, after the birth op, into the storage the birth op's result
// views (its base's): a copy of the view there would take that write away from the base.
const OpEvent* written_later(const LayoutCause& c, const Report& r) {
  if (c.birth_op < 0 || c.birth_op >= static_cast<int64_t>(r.ops.size()) || r.ops[c.birth_op].outputs.empty())
    return nullptr;
  const int64_t writer = written_after(r, r.ops[c.birth_op].outputs.front().storage_id, c.birth_op);
  return writer < 0 ? nullptr : &r.ops[writer];
}

// The caution a `.contiguous()` at the birth op takes where the code writes into its result's
// storage later: the copy would take that write away.
std::string unless_written(const LayoutCause& c, const Report& r) {
  const OpEvent* writer = written_later(c, r);
  return writer ? "; not while the code writes into it later (" + writer->name.str() + place(writer->source.str()) +
                      "): the copy would take that write away from the data it views"
                : "";
}

std::string fix_at_op(const LayoutCause& c, const Report& r, MemoryFormat model_format) {
  const std::string op = c.op_name + place(c.where) + code_of(c);
  switch (op_fix(c, r, model_format)) {
    case OpFix::compiled: return compiled_layout_fix(c.op_name + place(c.where), c.layout);
    case OpFix::library: return fix_in_library(c, r);
    case OpFix::backward: return fix_in_backward(c, r, backward_function(c.op_name), model_format);
    case OpFix::already_dense:
      return "nothing to add at " + c.where + ": the line already makes the data dense (`.contiguous()`), and its " +
             std::to_string(c.explicit_copies) + " explicit " + (c.explicit_copies == 1 ? "copy is" : "copies are") +
             " the price of the " + c.op_name + "'s layout: keep it where the ops after it need dense data";
    case OpFix::failed_view:
      return "`.reshape(...)` instead of `.view(...)` at " + failed_view(c, r)->source.str() +
             ", or `.contiguous()` on the result of " + op;
    case OpFix::memory_format: {
      const std::string format = wanted_format(model_format, c.layout);
      return "`" + contiguous_call(format) + "` on the result of " + op + ": the data goes on " +
             (format == "contiguous" ? "in NCHW" : "in " + format) + ", the format of the model's weights" +
             unless_written(c, r);
    }
    case OpFix::plain: break;
  }
  const int64_t copies = c.copies + c.explicit_copies;
  return "`.contiguous()` on the result of " + op + ": the ops after it read dense data" +
         (copies > 1 ? " (one copy there instead of " + std::to_string(copies) + " in the ops that read it)" : "") +
         unless_written(c, r);
}

FixAction not_applied(const std::string& why) {
  FixAction a;
  a.not_applied = why;
  return a;
}

FixAction action_at_op(const LayoutCause& c, const Report& r, MemoryFormat model_format) {
  FixAction a;
  switch (op_fix(c, r, model_format)) {
    case OpFix::compiled: return not_applied("a compile setting, not a line of code");
    case OpFix::library: return not_applied("an installed package's line: the model-wide fix is the one to measure");
    case OpFix::backward:
      return not_applied("a gradient's layout: enforced in a backward function or a hook, which the what-if "
                         "does not write");
    case OpFix::already_dense: return not_applied("the line already makes the data dense");
    case OpFix::failed_view:  // the run fails without it: nothing to time against
      return not_applied("the run fails at the view: a fix to make, not a saving to measure");
    case OpFix::memory_format: a.format = wanted_format(model_format, c.layout); break;
    case OpFix::plain: a.format = "contiguous"; break;
  }
  if (const OpEvent* writer = written_later(c, r))
    return not_applied("the result or its base is written in place later, by " + writer->name.str() +
                       place(writer->source.str()) + ": a copy there would take that write away from the base");
  a.kind = FixKind::contiguous_at;
  a.op = c.op_name;
  a.where = c.where;
  return a;
}

std::string fix_at_input(const LayoutCause& c, const Report& r, MemoryFormat model_format) {
  const std::string format = wanted_format(model_format, c.layout);
  const ModelInput& in = r.run.inputs[c.birth_input];
  if (r.run.model_format == "eager" || !in.origin.empty())
    return "`" + contiguous_call(format) + "` on " + (in.origin.empty() ? "model input " + std::to_string(c.birth_input) : in.origin.substr(0, in.origin.find(" of "))) +
           " where it is made, before " + (in.origin.empty() ? "the model call" : in.origin.substr(in.origin.find(" of ") + 4));
  InputSpec spec = in.spec;
  spec.format = format;
  spec.perm.clear();
  return "feed input " + std::to_string(c.birth_input) + " in the model's format: --input " + input_spec_text(spec) +
         " (now " + spec.text + ")";
}

// A tensor no recorded op made: the model's own parameter or buffer where the analysis named
// it (its layout was set between the calls: `.data =`, set_, a state dict assigned, ...).
std::string fix_at_unrecorded(const LayoutCause& c, MemoryFormat model_format) {
  const std::string call = contiguous_call(wanted_format(model_format, c.layout));
  if (c.input_text.empty())
    return "`" + call + "` where the tensor is made: no recorded op made it, so it is a parameter, a buffer or a "
           "tensor made before the recorded call";
  const std::string name = c.input_text.substr(0, c.input_text.find(" (sizes"));
  const std::string made = c.where.empty() ? "" : ", made at " + c.where + code_of(c);
  return "`" + call + "` on " + name + " where the code sets it between the calls" + made + " (`.data = w" + call +
         "`, or `nn.Parameter(w" + call + ")` for a new parameter): every op that reads it pays for its layout";
}

// The format model-wide conversion gives the model: the layout that arrives where the model's
// weights pay for it in another format; "" where no conversion is the alternative.
std::string model_wide_format(const LayoutCause& c, MemoryFormat model_format) {
  const bool pays_for_format = c.mixed_ops > 0 || !c.gradients.empty() || c.copies > 0;
  if (!pays_for_format) return "";
  if (is_channels_last(c.layout) && model_format != MemoryFormat::nhwc) return c.layout;
  if (c.layout == "contiguous" && model_format == MemoryFormat::nhwc) return "contiguous";
  return "";
}

std::string model_wide_fix(const LayoutCause& c, MemoryFormat model_format) {
  const std::string format = model_wide_format(c, model_format);
  if (format.empty()) return "";
  if (format != "contiguous")
    return "or convert the model to the layout that arrives: model.to(memory_format=torch." + format +
           "); on the CPU (oneDNN) and under inductor channels_last is often the faster of the two, so measure "
           "both (layoutprof compare-formats)";
  return "or convert the model back to the layout that arrives: model.to(memory_format=torch.contiguous_format); "
         "channels_last is often the faster on the CPU (oneDNN) and under inductor, so measure both "
         "(layoutprof compare-formats)";
}

// The fix at the birthplace as an action: at an op, on an input, on a parameter or buffer.
FixAction birthplace_action(const LayoutCause& c, const Report& r, MemoryFormat model_format) {
  FixAction a;
  switch (c.kind) {
    case BirthKind::op: return action_at_op(c, r, model_format);
    case BirthKind::model_input:
      a.kind = FixKind::feed_input;
      a.input = c.birth_input;
      a.format = wanted_format(model_format, c.layout);
      return a;
    case BirthKind::unrecorded: {
      const size_t open = c.input_text.find('`'), close = c.input_text.find('`', open + 1);
      if (open == std::string::npos || close == std::string::npos)
        return not_applied("no recorded op made the tensor and it is no parameter or buffer: no place to apply it");
      a.kind = FixKind::dense_parameter;
      a.tensor = c.input_text.substr(open + 1, close - open - 1);
      a.where = c.where;
      a.format = wanted_format(model_format, c.layout);
      return a;
    }
  }
  return a;
}

FixAction swap_action(const std::string& op, const std::string& where) {
  FixAction a;
  a.kind = FixKind::swap_operands;
  a.op = op;
  a.where = where;
  return a;
}

// An op on the chain whose operands a swap would change the result of, where it took one
// operand's layout over another: a subtraction, an add that scales its second operand (alpha on
// its line, as birthplace.cpp's is_commutative reads it). Listed as a swap not applied, by name.
std::string swap_refused(const std::string& name, const std::string& code) {
  if (name == "aten::sub") return "aten::sub is not commutative: swapping its operands changes the result";
  if (name == "aten::add" && code.find("alpha") != std::string::npos)
    return "aten::add with alpha (a + alpha * b) is not commutative: swapping its operands changes the result";
  return "";
}

}  // namespace

std::vector<std::string> cause_fixes(const LayoutCause& c, const Report& r, MemoryFormat model_format) {
  std::vector<std::string> fixes;
  switch (c.kind) {
    case BirthKind::op: fixes.push_back(fix_at_op(c, r, model_format)); break;
    case BirthKind::model_input:
      if (c.birth_input >= 0 && c.birth_input < static_cast<int>(r.run.inputs.size()))
        fixes.push_back(fix_at_input(c, r, model_format));
      break;
    case BirthKind::unrecorded: fixes.push_back(fix_at_unrecorded(c, model_format)); break;
  }
  if (c.kind == BirthKind::op && !c.swapped_layout.empty())
    fixes.push_back("swap the operands of " + c.op_name + place(c.where) + code_of(c) + ": TensorIterator took operand " +
                    std::to_string(c.decided_by) + "'s strides; the other order gives " + c.swapped_layout);
  for (const LayoutChoice& choice : c.choices) {
    if (!choice.swappable || choice.op < 0 || choice.op >= static_cast<int64_t>(r.ops.size())) continue;
    const OpEvent& op = r.ops[choice.op];
    fixes.push_back("swap the operands of " + op.name.str() + place(op.source) +
                    (op.source_text.empty() ? "" : " (`" + op.source_text.str() + "`)") +
                    ": its result takes its first operand's layout (TensorIterator), so the " + choice.other +
                    " operand first keeps " + choice.other);
  }
  const std::string wide = model_wide_fix(c, model_format);
  // Recorded on the CPU, channels_last arriving at an NCHW model: neither format is the second
  // choice by default (oneDNN often runs channels_last faster), and no measurement decides here.
  const bool cpu = r.run.device.rfind("cpu", 0) == 0;
  if (cpu && !wide.empty() && !fixes.empty() && is_channels_last(c.layout) && model_format != MemoryFormat::nhwc) {
    // What oneDNN did with this layout in the backend pass decides the order, where it decides.
    const SeenConvolutions seen = seen_in_ops(r.backend, c.payers);
    const std::string convert = "convert the model to the layout that arrives: model.to(memory_format=torch." + c.layout + ")";
    if (seen.direct > 0 && seen.reordered == 0) {
      fixes.insert(fixes.begin(), convert + " (seen in the backend pass: oneDNN ran " + std::to_string(seen.direct) +
                                      " of these convolutions on the " + c.layout + " data directly, with no "
                                      "activation reorder, so the " + c.layout + " path costs no conversion of the data "
                                      "once the weights agree)");
      fixes[1] = "or " + fixes[1] + " (then oneDNN converts NCHW activations into its blocked format and back around "
                 "each convolution: measure with --what-if)";
      return fixes;
    }
    if (seen.reordered > 0 && seen.direct == 0) {
      fixes.front() += " (seen in the backend pass: oneDNN reordered the " + c.layout + " data in " +
                       std::to_string(seen.reordered) + (seen.reordered == 1 ? " convolution, " : " convolutions, ") +
                       std::to_string(seen.activation_reorders) +
                       (seen.activation_reorders == 1 ? " activation reorder, so " : " activation reorders, so ") + c.layout + " buys no direct read here)";
      fixes.push_back("or " + convert);
      return fixes;
    }
    fixes.front() = "measure both, no measurement decides here (on the CPU oneDNN often runs channels_last the "
                    "faster; layoutprof compare-formats): " + fixes.front() + "; or convert the model to the layout "
                    "that arrives: model.to(memory_format=torch." + c.layout + ")" +
                    (r.backend.state.empty() || r.backend.ran()
                         ? ""
                         : " (the backend pass, which shows what oneDNN converts, did not run: " + r.backend.reason + ")");
    return fixes;
  }
  if (!wide.empty()) fixes.push_back(wide);
  return fixes;
}

std::vector<FixAction> cause_actions(const LayoutCause& c, const Report& r, MemoryFormat model_format) {
  std::vector<FixAction> actions;
  if (c.kind != BirthKind::model_input || (c.birth_input >= 0 && c.birth_input < static_cast<int>(r.run.inputs.size())))
    actions.push_back(birthplace_action(c, r, model_format));
  if (c.kind == BirthKind::op && !c.swapped_layout.empty()) actions.push_back(swap_action(c.op_name, c.where));
  if (c.kind == BirthKind::op && c.decided_by >= 0 && c.swapped_layout.empty()) {
    const std::string why = swap_refused(c.op_name, c.code);
    if (!why.empty()) actions.push_back(not_applied(why + " (" + c.where + ")"));
  }
  for (const LayoutChoice& choice : c.choices) {
    if (choice.op < 0 || choice.op >= static_cast<int64_t>(r.ops.size())) continue;
    const OpEvent& op = r.ops[choice.op];
    if (choice.swappable) {
      actions.push_back(swap_action(op.name.str(), op.source.str()));
    } else {
      const std::string why = swap_refused(op.name.str(), op.source_text.str());
      if (!why.empty()) actions.push_back(not_applied(why + " (" + op.source.str() + ")"));
    }
  }
  const std::string wide = model_wide_format(c, model_format);
  if (!wide.empty()) {
    FixAction a;
    a.kind = FixKind::convert_model;
    a.format = wide;
    // First where the fixes' text puts the model's conversion first (cause_fixes).
    const SeenConvolutions seen = seen_in_ops(r.backend, c.payers);
    const bool first = r.run.device.rfind("cpu", 0) == 0 && is_channels_last(c.layout) &&
                       model_format != MemoryFormat::nhwc && seen.direct > 0 && seen.reordered == 0;
    actions.insert(first ? actions.begin() : actions.end(), a);
  }
  return actions;
}

std::string backward_function(const std::string& op_name) {
  static const std::string engine = "autograd::engine::evaluate_function: ";
  return op_name.rfind(engine, 0) == 0 ? op_name.substr(engine.size()) : std::string();
}

std::string birthplace_text(const LayoutCause& c) {
  const std::string function = backward_function(c.op_name);
  switch (c.kind) {
    case BirthKind::op:
      if (!function.empty())
        return c.layout + " born in the backward pass at " + function + ", the gradient of " +
               (c.where.empty() ? "its forward op" : c.where);
      return c.layout + " born at " + c.op_name + modules_text(c) +
             (c.where.empty() ? "" : " (" + c.where + ")") +
             (c.from_layout.empty() || c.from_layout == c.layout ? "" : " from " + c.from_layout + " data") +
             (c.decided_by >= 0 ? ", its layout following operand " + std::to_string(c.decided_by) + "'s strides (TensorIterator)" : "");
    case BirthKind::model_input: return c.layout + " arrives with the model's " + c.input_text;
    case BirthKind::unrecorded:
      if (!c.input_text.empty() && !c.where.empty())
        return c.layout + " comes with the model's " + c.input_text + ", laid out so before the call by " + c.op_name +
               " (" + c.where + ")";
      if (!c.input_text.empty())
        return c.layout + " comes with the model's " + c.input_text + ", laid out so before the call (no recorded op made it)";
      return c.layout + " comes from a tensor no recorded op made (a parameter, a buffer or a tensor made before the call)";
  }
  return c.layout;
}

std::string cause_cost_text(const LayoutCause& c) {
  std::vector<std::string> modules;
  for (const std::string& m : c.payer_modules) modules.push_back(m.empty() ? "(top)" : m);
  std::vector<std::string> parts;
  const int64_t copies = c.copies + c.explicit_copies;
  if (copies > 0)
    parts.push_back(std::to_string(c.copies) + " implicit" +
                    (c.explicit_copies > 0 ? " and " + std::to_string(c.explicit_copies) + " explicit" : "") +
                    (copies == 1 ? " copy, " : " copies, ") + mb(c.copy_bytes) + " MB" +
                    (c.copy_ns > 0 ? ", " + ms(c.copy_ns) + " ms" : ""));
  if (c.mixed_ops > 0)
    parts.push_back(std::to_string(c.mixed_ops) + " mixed-format op" + (c.mixed_ops == 1 ? "" : "s") + ", " +
                    std::to_string(c.mixed_without_copy) + " without a recorded copy" +
                    (c.mixed_bytes > 0 ? " (" + mb(c.mixed_bytes) + " MB of operands read in the other format, derived)" : ""));
  if (!c.gradients.empty())
    parts.push_back(std::to_string(c.gradients.size()) + (c.gradients.size() == 1 ? " gradient" : " gradients") +
                    " that DDP or AccumulateGrad must convert (" + list_text(c.gradients, 3) + ")");
  std::string text = "reaches " + list_text(modules, 4);
  for (size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? ": " : "; ") + parts[i];
  return text;
}

}  // namespace layoutprof
