// Gradient layouts of a training step's parameters: autograd's gradient layout contract and
// what DistributedDataParallel's reducer compares (see README, "Gradient layouts").
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "analysis/saturating.h"
#include "analysis/grads.h"

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

}  // namespace

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

// DDP's reducer views each parameter's slot in its bucket with the parameter's strides (or
// contiguous, for a parameter that is not dense) and, when a gradient is ready, warns once if
// the gradient's strides differ: that happens when AccumulateGrad kept a gradient whose
// strides differ from the parameter's on dims of size 1 only (a layout_mismatch gradient was
// copied into the parameter's layout before DDP sees it).
std::vector<std::string> ddp_warning_lines(const ParamGrad& p) {
  if (p.verdict != GradVerdict::size1_only) return {};
  const std::vector<int64_t> bucket = dense(p.sizes, p.strides) ? p.strides : contiguous_strides(p.sizes);
  return {"grad.sizes() = " + list(p.grad_sizes) + ", strides() = " + list(p.grad_strides),
          "bucket_view.sizes() = " + list(p.sizes) + ", strides() = " + list(bucket)};
}

std::string grad_suggestion(const ParamGrad& p) {
  const bool param_dense = dense(p.sizes, p.strides);
  int64_t bytes = p.elem_size;
  for (int64_t s : p.sizes) bytes *= s;
  switch (p.verdict) {
    case GradVerdict::match:
      return "";
    case GradVerdict::size1_only: {
      // channels_last gradient of an NCHW weight (1x1 or depthwise convolutions).
      const bool nhwc = channels_last_grad_of_nchw(p);
      return std::string("strides differ only on dims of size 1: AccumulateGrad keeps the gradient as it "
                         "is and nothing is slower, but DDP compares strides exactly and warns once. ") +
             (nhwc ? "The gradient is channels_last (a channels_last input): convert the model with "
                     "model.to(memory_format=torch.channels_last) before wrapping it in DDP, or "
                   : "") +
             "pass gradient_as_bucket_view=True to DDP (gradients are then written into the bucket), "
             "or ignore the warning";
    }
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

std::vector<std::string> ddp_contradictions(const Report& r) {
  std::vector<std::string> out;
  for (const std::string& seen : r.run.measured) {
    if (seen.rfind(kDdpSeen, 0) != 0) continue;
    if (seen.find("): none,") != std::string::npos) {
      for (const ParamGrad& p : r.parameters)
        if (p.verdict == GradVerdict::size1_only)
          out.push_back("`" + p.name + "`'s size1_only verdict predicts DDP's warning, but DDP gave none");
      continue;
    }
    bool has_sizes = false, has_strides = false;
    std::vector<int64_t> sizes, strides;
    try {
      sizes = numbers_after(seen, "grad sizes ", &has_sizes);
      strides = numbers_after(seen, " strides ", &has_strides);
    } catch (const std::exception&) {  // words this function does not read: nothing to compare
      continue;
    }
    if (!has_sizes || !has_strides) continue;
    bool predicted = false;
    for (const ParamGrad& p : r.parameters)
      predicted |= p.verdict == GradVerdict::size1_only && p.grad_sizes == sizes && p.grad_strides == strides;
    if (!predicted)
      out.push_back("DDP warned about a gradient of sizes " + list(sizes) + " and strides " + list(strides) +
                    " that no size1_only verdict predicts");
  }
  return out;
}

}  // namespace layoutprof
