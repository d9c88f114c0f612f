// Gradient layouts of a training step's parameters: autograd's gradient layout contract and
// what DistributedDataParallel's reducer compares (see README, "Gradient layouts").
#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "analysis/saturating.h"
#include "analysis/grads.h"
#include "core/layout.h"

namespace layoutprof {

namespace {

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Row-major strides of `sizes` (what a contiguous tensor, or DDP's bucket view of a
// parameter that is not dense, has).
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t step = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = step;
    step = saturating_mul(step, std::max<int64_t>(sizes[d], 1));
  }
  return strides;
}

// The strides a channels_last (NHWC) 4-D tensor of `sizes` has.
std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& sizes) {
  if (sizes.size() != 4) return {};
  const int64_t c = std::max<int64_t>(sizes[1], 1), h = std::max<int64_t>(sizes[2], 1),
                w = std::max<int64_t>(sizes[3], 1);
  return {h * w * c, 1, w * c, c};
}

// A channels_last gradient of an NCHW parameter: what a convolution's weight gets when its
// input is channels_last and the model is not.
bool channels_last_grad_of_nchw(const ParamGrad& p) {
  return p.sizes.size() == 4 && p.grad_strides == channels_last_strides(p.sizes) &&
         p.strides == contiguous_strides(p.sizes);
}

// Whether sizes/strides describe a dense, non-overlapping tensor (some permutation of
// row-major; dims of size 1 may have any stride).
bool dense(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (sizes.size() != strides.size()) return false;
  std::vector<size_t> dims;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] == 0) return true;  // empty: nothing to overlap
    else if (sizes[d] != 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

// Whether a gradient of `grad_strides` obeys autograd's layout contract with p as it is now
// (torch/csrc/autograd/utils/grad_layout_contract.h, obeys_layout_contract): for a dense
// parameter, its strides on every dim of size > 1 and no zero stride on a dim of size 1; for
// any other parameter, contiguous.
bool obeys_contract(const std::vector<int64_t>& grad_strides, const ParamGrad& p) {
  if (grad_strides.size() != p.sizes.size()) return false;
  const bool param_dense = dense(p.sizes, p.strides);
  const std::vector<int64_t> row_major = contiguous_strides(p.sizes);
  for (size_t d = 0; d < p.sizes.size(); ++d) {
    if (p.sizes[d] == 1) {
      if (param_dense && grad_strides[d] == 0) return false;
    } else if (grad_strides[d] != (param_dense ? p.strides[d] : row_major[d])) {
      return false;
    }
  }
  return true;
}

// The parameter's strides were not those its buckets were built with.
bool changed_since_buckets(const ParamGrad& p) {
  return !p.bucket_param_strides.empty() && p.bucket_param_strides != p.strides;
}

}  // namespace

std::vector<int64_t> bucket_view_strides(const ParamGrad& p) {
  const std::vector<int64_t>& built = p.bucket_param_strides.empty() ? p.strides : p.bucket_param_strides;
  return dense(p.sizes, built) ? built : contiguous_strides(p.sizes);
}

std::vector<int64_t> stored_grad_strides(const ParamGrad& p) {
  if (p.had_grad) return p.prior_grad_strides;
  if (p.grad_sizes == p.sizes && obeys_contract(p.grad_strides, p)) return p.grad_strides;
  return dense(p.sizes, p.strides) ? p.strides : contiguous_strides(p.sizes);
}

bool ddp_warns(const ParamGrad& p) {
  return p.requires_grad && p.has_grad && stored_grad_strides(p) != bucket_view_strides(p);
}

bool accumulate_grad_warns(const ParamGrad& p) {
  return p.requires_grad && p.has_grad && p.had_grad && !obeys_contract(p.prior_grad_strides, p);
}

// AccumulateGrad keeps a gradient as it comes when it "obeys the layout contract"
// (torch/csrc/autograd/utils/grad_layout_contract.h): for a dense parameter, the same strides
// on every dim of size > 1 and no zero stride on a dim of size 1; for any other parameter, a
// contiguous gradient. Otherwise it copies it into the parameter's layout.
GradVerdict grad_verdict(const ParamGrad& p) {
  if (!p.requires_grad) return GradVerdict::frozen;
  if (!p.has_grad) return GradVerdict::no_grad;
  if (p.grad_sizes != p.sizes || p.grad_strides.size() != p.sizes.size()) return GradVerdict::layout_mismatch;
  if (p.grad_strides == p.strides) return GradVerdict::match;
  const bool param_dense = dense(p.sizes, p.strides);
  bool contract = p.grad_dense;
  for (size_t d = 0; d < p.sizes.size() && contract; ++d) {
    if (p.sizes[d] == 1) {
      if (p.grad_strides[d] == 0) contract = false;
    } else if (param_dense ? p.grad_strides[d] != p.strides[d]
                           : p.grad_strides[d] != contiguous_strides(p.sizes)[d]) {
      contract = false;
    }
  }
  if (!contract || !param_dense) return GradVerdict::layout_mismatch;
  return GradVerdict::size1_only;
}

// DDP's reducer prints the .grad AccumulateGrad left and its bucket view
// (reducer.cpp, check_grad_layout) where their strides differ.
std::vector<std::string> ddp_warning_lines(const ParamGrad& p) {
  if (!ddp_warns(p)) return {};
  return {"grad.sizes() = " + list(p.grad_sizes) + ", strides() = " + list(stored_grad_strides(p)),
          "bucket_view.sizes() = " + list(p.sizes) + ", strides() = " + list(bucket_view_strides(p))};
}

namespace {

// What the gradient's own layout means (the verdict).
std::string verdict_suggestion(const ParamGrad& p) {
  const bool param_dense = dense(p.sizes, p.strides);
  int64_t bytes = p.elem_size;
  for (int64_t s : p.sizes) bytes *= s;
  switch (p.verdict) {
    case GradVerdict::match:
      return "";
    case GradVerdict::size1_only:
      if (odd_size1_strides(p.sizes, p.strides))
        return "the parameter's own strides on dims of size 1 are not those a contiguous tensor has (" +
               list(p.strides) + " for " + list(contiguous_strides(p.sizes)) +
               ": a permute of a tensor with dims of size 1 leaves them). Nothing is slower" +
               (ddp_warns(p) ? ", but DDP compares every stride and warns once" : "") +
               "; where the parameter is set, `w.clone(memory_format=torch.contiguous_format)` gives it "
               "contiguous strides (`.contiguous()` keeps these: the tensor counts as contiguous already)";
      // The memory order is the same: DDP's copy into its bucket reads it in order.
      return std::string("strides differ only on dims of size 1, where a stride means nothing: AccumulateGrad "
                         "keeps the gradient as it is and nothing is slower") +
             (ddp_warns(p) ? ", but DDP compares every stride and warns once" : "") +
             (channels_last_grad_of_nchw(p) ? ". The gradient is channels_last (a channels_last input): "
                                              "model.to(memory_format=torch.channels_last), before wrapping it in "
                                              "DDP, gives the weight that layout too"
                                            : "");
    case GradVerdict::layout_mismatch:
      if (!param_dense)
        return "the parameter itself is not dense (strides " + list(p.strides) +
               "): autograd wants contiguous gradients for it, so the gradient and the parameter never "
               "share a layout (AccumulateGrad copies every gradient that is not contiguous, the "
               "optimizer reads both strided); make it contiguous where it is created "
               "(nn.Parameter(w.contiguous()))";
      if (!p.grad_dense)
        return "the gradient arrives as a non-dense view (strides " + list(p.grad_strides) +
               ", e.g. from expand or a broadcast): AccumulateGrad copies it (" + std::to_string(bytes) +
               " bytes) into the parameter's layout every step";
      if (channels_last_grad_of_nchw(p))
        return "the gradient is channels_last (a channels_last input meets this NCHW weight): "
               "AccumulateGrad copies it (" + std::to_string(bytes) +
               " bytes) into NCHW every step, after the convolutions converted the weight the other "
               "way; convert the model with model.to(memory_format=torch.channels_last) (before "
               "wrapping it in DDP), or feed NCHW input";
      return "the gradient arrives in another layout (strides " + list(p.grad_strides) +
             " for the parameter's " + list(p.strides) +
             ", e.g. the parameter is used transposed or permuted): AccumulateGrad copies it (" +
             std::to_string(bytes) +
             " bytes) into the parameter's layout every step; store the parameter in the layout the "
             "forward uses, so that no transpose or permute of it is needed";
    case GradVerdict::no_grad:
      return "requires grad but got no gradient in this step (unused in this forward): DDP needs "
             "find_unused_parameters=True, or freeze it (requires_grad_(False)) if it is never used";
    case GradVerdict::frozen:
      return "";
  }
  return "";
}

// A .grad kept from an earlier step, laid out for the parameter as it was then.
std::string prior_grad_suggestion(const ParamGrad& p) {
  if (!accumulate_grad_warns(p)) return "";
  return "the .grad kept from an earlier step has strides " + list(p.prior_grad_strides) + ", the parameter " +
         list(p.strides) +
         " now (its layout changed since; zero_grad(set_to_none=False), or accumulation over micro-batches, "
         "keeps the old .grad): AccumulateGrad adds every gradient into it across layouts and warns once; set "
         "the .grad to None where the parameter's layout changes (optimizer.zero_grad(set_to_none=True))";
}

// Buckets built when the parameter had other strides.
std::string bucket_suggestion(const ParamGrad& p) {
  if (!ddp_warns(p) || !changed_since_buckets(p)) return "";
  return "DDP built its buckets " + p.buckets_built + ", when the parameter's strides were " +
         list(p.bucket_param_strides) + "; they are " + list(p.strides) +
         " now: DDP copies the gradient into its bucket view and back across layouts every step, and warns "
         "once; give the parameter its layout before the model is wrapped in DDP (or keep the one it had)";
}

}  // namespace

std::string grad_suggestion(const ParamGrad& p) {
  std::string out;
  for (std::string part : {prior_grad_suggestion(p), bucket_suggestion(p), verdict_suggestion(p)}) {
    if (part.empty()) continue;
    if (!out.empty()) part[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(part[0])));
    out += (out.empty() ? "" : ". ") + part;
  }
  return out;
}

namespace {

// The numbers of "[16, 1, 3, 3]" after `key` in `text` ("grad sizes ", " strides "); *found
// says whether the key is there.
std::vector<int64_t> numbers_after(const std::string& text, const std::string& key, bool* found) {
  std::vector<int64_t> out;
  const size_t at = text.find(key + "[");
  *found = at != std::string::npos;
  if (!*found) return out;
  std::string digits;
  for (size_t i = at + key.size() + 1; i < text.size() && text[i] != ']'; ++i) {
    if (text[i] == ',') {
      out.push_back(std::stoll(digits));
      digits.clear();
    } else if (text[i] != ' ') {
      digits += text[i];
    }
  }
  if (!digits.empty()) out.push_back(std::stoll(digits));
  return out;
}

}  // namespace

namespace {

// What a measured warning line says: none heard, or the step it came in (-1: not named) and the
// gradient's sizes and strides it printed.
struct Heard {
  bool none = false, read = false;
  int64_t step = -1;
  std::vector<int64_t> sizes, strides;
};

Heard heard_in(const std::string& seen) {
  Heard h;
  const size_t close = seen.find("):");
  h.none = seen.find("): none,") != std::string::npos;
  for (const std::string unit : {"step ", "model call "}) {
    const size_t at = seen.rfind(unit, close);
    if (at == std::string::npos || close == std::string::npos || h.step >= 0) continue;
    try {
      h.step = std::stoll(seen.substr(at + unit.size(), close - at - unit.size()));
    } catch (const std::exception&) {
    }
  }
  bool has_sizes = false, has_strides = false;
  try {
    h.sizes = numbers_after(seen, "grad sizes ", &has_sizes);
    h.strides = numbers_after(seen, " strides ", &has_strides);
  } catch (const std::exception&) {  // words this function does not read: nothing to compare
    return h;
  }
  h.read = has_sizes && has_strides;
  return h;
}

// One warning line against the predictions for the shown step (the warnings come once per
// process: one heard before the shown step says nothing of it).
void contradictions_of(const std::string& seen, bool ddp, const Report& r, std::vector<std::string>& out) {
  const char* who = ddp ? "DDP" : "AccumulateGrad";
  auto predicts = [&](const ParamGrad& p) { return ddp ? ddp_warns(p) : accumulate_grad_warns(p); };
  const int64_t shown = r.run.warmup + 1;
  const Heard h = heard_in(seen);
  const bool assumed = std::any_of(r.parameters.begin(), r.parameters.end(), [](const ParamGrad& p) {
    return p.buckets_built.rfind("before", 0) == 0;
  });
  if (h.none || (h.read && h.step > shown)) {
    if (h.none && ddp && assumed) return;  // DDP may have warned before the profile listened
    for (const ParamGrad& p : r.parameters)
      if (predicts(p))
        out.push_back("`" + p.name + "`: the shown step predicts " + who + "'s warning, but " + who +
                      (h.none ? " gave none" : " gave it in step " + std::to_string(h.step)));
    return;
  }
  if (!h.read || (h.step >= 0 && h.step < shown)) return;
  bool predicted = false;
  for (const ParamGrad& p : r.parameters)
    predicted |= predicts(p) && p.grad_sizes == h.sizes &&
                 (ddp ? stored_grad_strides(p) : p.prior_grad_strides) == h.strides;
  if (!predicted)
    out.push_back(std::string(who) + " warned about a gradient of sizes " + list(h.sizes) + " and strides " +
                  list(h.strides) + " that no prediction names");
}

}  // namespace

std::vector<std::string> ddp_contradictions(const Report& r) {
  std::vector<std::string> out;
  for (const std::string& seen : r.run.measured) {
    if (seen.rfind(kDdpSeen, 0) == 0) contradictions_of(seen, true, r, out);
    if (seen.rfind(kAccumulateGradSeen, 0) == 0) contradictions_of(seen, false, r, out);
  }
  return out;
}

}  // namespace layoutprof
