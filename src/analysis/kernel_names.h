// What a GPU kernel's name says about layout, read from the names CUPTI records: cuDNN's own
// layout conversion kernels (an NCHW tensor transposed to NHWC for a kernel that computes in
// NHWC, and back), and the layout a convolution or GEMM kernel computes in where its name says
// it. "Unknown" where the name does not say: never a guess. Plain C++, no CUDA: the names come
// from the trace (OpEvent::kernels), recorded by the CUPTI tracer.
#pragma once

#include <string>
#include <string_view>

namespace layoutprof {

struct KernelLayout {
  // A cuDNN layout conversion: nchwToNhwcKernel, nhwcToNchwKernel or genericTranspose_kernel, in
  // cuDNN's namespace (none in cuDNN 7, cudnn::ops in 8, cudnn::engines_precompiled in 9) and with
  // cuDNN's template signature (a kernel of the user's own by that name is not one).
  bool conversion = false;
  std::string from, to;  // "nchw", "nhwc"; both "" for genericTranspose_kernel (its direction is not named)
  // The layout the kernel computes in, where its name says it (..._nhwc_tn_v1, _nhwckrsc_nchw_,
  // cudnnTensorFormat_t=1): "nhwc", "nchw"; "" unknown.
  std::string computes_in;
};

KernelLayout classify_kernel_name(std::string_view name);

// The name without its return type, namespace, template arguments and parameters:
// "void cudnn::ops::nchwToNhwcKernel<__half, ...>(...)" -> "nchwToNhwcKernel".
std::string unqualified_kernel_name(std::string_view name, std::string* scope = nullptr);

}  // namespace layoutprof
