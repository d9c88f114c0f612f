// EagerSession::maker_of: the op and line that made a tensor's view exactly (what names the line
// where a compiled function's recompiled argument was made), among the ops recorded between the
// calls and in a timed call; none in a call recorded without tensors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "eager/module_sites.h"
#include "eager/session.h"
#include "runner/model.h"

namespace layoutprof {
namespace {

uint32_t g_line = 0;  // the source line the probe names for the ops run now
uint32_t line_now(uint32_t*) { return g_line; }

EagerOptions quiet() {
  EagerOptions o;
  o.counters = false;
  o.gpu = false;
  return o;
}

TEST(ViewMaker, TheLineThatMadeAViewIsFoundBeforeTheCallAndInsideIt) {
  ModuleSites& sites = module_sites();
  sites.reset_thread();
  sites.set_source_probe(&line_now);
  const uint32_t load = sites.source_id("data.py:12", "x = hwc.permute(0, 3, 1, 2)");
  const uint32_t loop = sites.source_id("loop.py:30", "step(ids[:, -1:])");
  const at::Tensor before = torch::randn({4, 6}).t();  // made before anything records
  g_line = 0;
  {
    EagerSession session(quiet());
    const at::Tensor hwc = torch::randn({2, 8, 8, 3});
    g_line = load;
    const at::Tensor x = hwc.permute({0, 3, 1, 2});
    g_line = 0;
    session.begin_call({{"", x}, {"", before}});
    std::optional<ViewMaker> made = session.maker_of({"", x});
    ASSERT_TRUE(made) << "made before the call, among the recent ops";
    EXPECT_EQ(made->op, "aten::permute");
    EXPECT_EQ(made->where, "data.py:12");
    EXPECT_EQ(made->code, "x = hwc.permute(0, 3, 1, 2)");
    EXPECT_FALSE(session.maker_of({"", before})) << "no recorded op made it";
    EXPECT_FALSE(session.maker_of({"", x.contiguous()})) << "another view: not the permute's";

    g_line = loop;
    const at::Tensor ids = torch::arange(12).view({2, 6});
    const at::Tensor last = ids.slice(1, 5, 6);
    g_line = 0;
    made = session.maker_of({"", last});
    ASSERT_TRUE(made) << "made in the timed call";
    EXPECT_EQ(made->op, "aten::slice");
    EXPECT_EQ(made->where, "loop.py:30");
    session.end_call();

    session.begin_call();
    g_line = load;
    const at::Tensor again = torch::randn({2, 8, 8, 3}).permute({0, 3, 1, 2});
    g_line = 0;
    EXPECT_FALSE(session.maker_of({"", again})) << "a call after the first keeps no tensors";
    EXPECT_FALSE(session.maker_of({"", x})) << "the first call's arguments are forgotten";
    session.end_call();
  }
  sites.set_source_probe(nullptr);
  sites.reset_thread();
}

}  // namespace
}  // namespace layoutprof
