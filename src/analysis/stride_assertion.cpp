#include "analysis/stride_assertion.h"

#include <string>

#include "analysis/birthplace.h"
#include "analysis/cause_text.h"
#include "analysis/compiled_code.h"
#include "analysis/hazards.h"

namespace layoutprof {

namespace {

bool is_stride_assertion(const std::string& error) {
  return error.find("expected size ") != std::string::npos && error.find(", stride ") != std::string::npos &&
         error.find(" at dim=") != std::string::npos;
}

// "aten::_transformer_encoder_layer_fwd" from "Error in op: torch.ops.aten._transformer_encoder_layer_fwd.default";
// "" when the message names none (older torch).
std::string named_op(const std::string& error) {
  static const std::string tag = "Error in op: torch.ops.";
  const size_t at = error.find(tag);
  if (at == std::string::npos) return "";
  const size_t begin = at + tag.size();
  const size_t end = error.find_first_of(" ;)\n", begin);
  std::string name = error.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return "";
  name.replace(dot, 1, "::");
  const size_t overload = name.find('.', dot + 2);
  return overload == std::string::npos ? name : name.substr(0, overload);
}

// The assertion's own words: "expected size 16==16, stride 64==1 at dim=1; ..." up to the op's.
std::string assertion_words(const std::string& error) {
  const size_t begin = error.find("expected size ");
  const size_t end = error.find(" (Error in op", begin);
  return error.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

int64_t stride_assertion_op(const Report& r) {
  if (r.run.status != RunStatus::failed || !is_stride_assertion(r.run.error)) return -1;
  int64_t region = -1;
  for (const OpEvent& op : r.ops)
    if (op.parent < 0 && is_compiled_code(op.name)) region = op.id;
  if (region < 0) return -1;
  const std::string name = named_op(r.run.error);
  int64_t last = -1, named = -1;
  for (int64_t id = region + 1; id < static_cast<int64_t>(r.ops.size()) && r.ops[id].depth > 0; ++id) {
    if (r.ops[id].outputs.empty()) continue;
    last = id;
    if (!name.empty() && r.ops[id].name == name) named = id;
  }
  return named >= 0 ? named : last;
}

std::optional<Hazard> stride_assertion_hazard(const Report& r) {
  const int64_t id = stride_assertion_op(r);
  if (id < 0 || r.ops[id].inputs.empty()) return std::nullopt;
  const OpEvent& op = r.ops[id];
  int64_t region = id;
  while (r.ops[region].parent >= 0) region = r.ops[region].parent;
  const TensorInfo& in = op.inputs.front();
  Hazard h;
  h.kind = HazardKind::stride_assertion;
  h.op = id;
  h.op_name = op.name.str();
  h.module = r.ops[region].module.str();
  h.where = r.ops[region].source.str();
  h.code = r.ops[region].source_text.str();
  h.layout = extent_text(in);
  h.tensor = "the input of " + h.op_name;
  h.detail = "the compiled code checks " + h.op_name + "'s real strides against its fake (meta) kernel's and they differ (" +
             assertion_words(r.run.error) + ", the real one first): its input is " + in.label().str() + " (" +
             extent_text(in) + ") and its output follows that layout where the fake kernel's does not";
  h.fixes = {"report " + h.op_name + " to PyTorch: its fake kernel's strides differ from its real ones "
             "(torch.library.opcheck finds this for a custom op)"};
  if (const LayoutCause* c = cause_paid_by(r, id)) {
    h.maker = birthplace_text(*c);
    h.maker_where = c->where;
    h.detail += "; its layout: " + h.maker;
    if (c->kind == BirthKind::op && backward_function(c->op_name).empty())
      h.fixes.insert(h.fixes.begin(), "workaround: `.contiguous()` on the result of " + c->op_name +
                                          (c->where.empty() ? "" : " at " + c->where) +
                                          ", so that the compiled code gets the layout its fake kernel assumes");
    else if (c->kind == BirthKind::model_input)
      h.fixes.insert(h.fixes.begin(), "workaround: `.contiguous()` on the " + c->input_text.substr(0, c->input_text.find(':')) +
                                          " where it is made");
  }
  if (h.fixes.size() == 1)
    h.fixes.insert(h.fixes.begin(), "workaround: `.contiguous()` on the tensor handed to the compiled code at " +
                                        (h.where.empty() ? "its call" : h.where));
  return h;
}

}  // namespace layoutprof
