// The GPU kernel names' layouts, on a fixture of real names, each as a public report printed it.
#include <gtest/gtest.h>

#include "analysis/kernel_names.h"

namespace layoutprof {
namespace {

struct Named {
  const char* name;
  const char* source;  // where it was printed
  bool conversion;
  const char* from;
  const char* to;
  const char* computes_in;
};

const Named kFixture[] = {
    // cuDNN 7's transposes (no namespace), nvprof on MXNet's FP16 training, apache/mxnet#17665.
    {"void nchwToNhwcKernel<__half, __half, float, bool=1, bool=0>(int, int, int, int, __half const *, __half*, float, float)",
     "apache/mxnet#17665", true, "nchw", "nhwc", ""},
    // ... and beside a convolution whose name says NHWC, apache/mxnet#14684.
    {"void nhwcToNchwKernel<float, float, float, bool=1, bool=0>(int, int, int, int, float const *, float*, float, float)",
     "apache/mxnet#14684", true, "nhwc", "nchw", ""},
    {"volta_s884cudnn_fp16_128x128_ldg8_relu_exp_interior_nhwc_tn_v1", "apache/mxnet#14684", false, "", "", "nhwc"},
    {"turing_s1688cudnn_fp16_128x128_ldg8_wgrad_idx_exp_interior_nhwc_nt_v1", "apache/mxnet#17665", false, "", "", "nhwc"},
    // cuDNN 8's generic transpose (its direction is not in the name), nsys on an RTX 3080, pytorch#54324.
    {"void cudnn::ops::genericTranspose_kernel<float, __half, float, true, (cudnnKernelDataType_t)0>(float const*, __half*)",
     "pytorch/pytorch#54324", true, "", "", ""},
    // A grouped convolution's weight gradient with cuDNN's format argument (1: NHWC), pytorch#34977.
    {"void wgrad2d_grouped_direct_kernel<__half, float, float, cudnnTensorFormat_t=1>(cudnnTensorStruct, __half const *)",
     "pytorch/pytorch#34977", false, "", "", "nhwc"},
    // Names that do not say: unknown, never a guess.
    {"void conv2d_grouped_direct_kernel<__half, __half, __half, float, float, bool=1, bool=0, int=1, int=0, int=0>"
     "(cudnnTensorStruct, __half const *, cudnnFilterStruct, __half const *)",
     "pytorch/pytorch#34977", false, "", "", ""},
    {"volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", "ryujaehun/pytorch-gpu-benchmark#6", false, "", "", ""},
    {"void cudnn::detail::implicit_convolve_sgemm<float, float, int=1024, int=5, int=5, int=3, int=3, int=3, int=1, "
     "bool=1, bool=0, bool=1>(int, int, int, float const *, int, float*)",
     "ryujaehun/pytorch-gpu-benchmark#6", false, "", "", ""},
};

TEST(KernelNames, TheFixturesNamesReadAsTheirReportsShow) {
  for (const Named& n : kFixture) {
    const KernelLayout k = classify_kernel_name(n.name);
    EXPECT_EQ(k.conversion, n.conversion) << n.source << ": " << n.name;
    EXPECT_EQ(k.from, n.from) << n.name;
    EXPECT_EQ(k.to, n.to) << n.name;
    EXPECT_EQ(k.computes_in, n.computes_in) << n.name;
  }
}

TEST(KernelNames, CudnnNinesNamespaceIsCudnns) {
  const KernelLayout k = classify_kernel_name(
      "void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>"
      "(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __half const*, __half*)");
  EXPECT_TRUE(k.conversion);
  EXPECT_EQ(k.from, "nchw");
  EXPECT_EQ(k.to, "nhwc");
}

TEST(KernelNames, AUsersOwnKernelOfTheSameNameIsNotCudnns) {
  // No template signature, or another namespace: a kernel of the user's that happens to share the name.
  EXPECT_FALSE(classify_kernel_name("nhwcToNchwKernel(float const*, float*, int, int, int, int)").conversion);
  EXPECT_FALSE(classify_kernel_name("void mylib::nhwcToNchwKernel<float, float, float, true, false>(float const*, float*)").conversion);
  EXPECT_FALSE(classify_kernel_name("void nhwcToNchwKernel<float>(float const*, float*)").conversion);
}

TEST(KernelNames, TheLastLayoutTokenIsTheOutputs) {
  EXPECT_EQ(classify_kernel_name("sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize128x128x32").computes_in,
            "nchw");
  EXPECT_EQ(classify_kernel_name("void kernel(float nhwc)").computes_in, "");  // parameters are not the name
  EXPECT_EQ(unqualified_kernel_name("void cudnn::ops::nchwToNhwcKernel<__half>(int)"), "nchwToNhwcKernel");
}

}  // namespace
}  // namespace layoutprof
