#include "analysis/dtlb_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "support/errors.h"
#include "synthetic.h"

namespace layoutprof {
namespace {

using testing::tensor;

// The reference: every element, in destination order, one read then one write, no shortcuts.
DtlbEstimate brute_force(const TensorInfo& src, const TensorInfo& dst, const TlbConfig& c) {
  TlbSim sim(c);
  DtlbEstimate est;
  std::vector<int> order = dst.layout().order;
  size_t n = dst.sizes().size();
  std::vector<int64_t> idx(n, 0);
  int64_t total = dst.numel();
  for (int64_t e = 0; e < total; ++e) {
    int64_t so = src.storage_offset, d = dst.storage_offset;
    for (size_t k = 0; k < n; ++k) {
      so += idx[k] * src.strides()[k];
      d += idx[k] * dst.strides()[k];
    }
    for (uint64_t tag : {static_cast<uint64_t>(so * src.elem_size() / c.page_bytes),
                         (uint64_t{1} << 40) + static_cast<uint64_t>(d * dst.elem_size() / c.page_bytes)}) {
      int level = sim.access(tag);
      est.accesses++;
      est.l1_misses += level > 0;
      est.walks += level == 2;
    }
    for (size_t k = n; k-- > 0;) {  // next index in the destination's physical order
      int dim = order[k];
      if (++idx[dim] < dst.sizes()[dim]) break;
      idx[dim] = 0;
    }
  }
  return est;
}

TlbConfig small_tlb() { return parse_tlb_config("l1=8:2,l2=32:4,page=256"); }

struct Case {
  const char* what;
  TensorInfo src;
  TensorInfo dst;
};

TEST(DtlbModel, MatchesTheBruteForceReference) {
  std::vector<Case> cases = {
      {"contiguous", tensor({16, 64}, {64, 1}), tensor({16, 64}, {64, 1}, 2)},
      {"transpose", tensor({64, 48}, {1, 64}), tensor({64, 48}, {48, 1}, 2)},
      {"permute 3-D", tensor({8, 16, 12}, {12, 96, 1}), tensor({8, 16, 12}, {192, 12, 1}, 2)},
      {"narrow with offset", tensor({10, 30}, {100, 1}), tensor({10, 30}, {30, 1}, 2)},
      {"broadcast source", tensor({32, 40}, {0, 1}), tensor({32, 40}, {40, 1}, 2)},
      {"into channels_last", tensor({2, 8, 6, 5}, {240, 30, 5, 1}), tensor({2, 8, 6, 5}, {240, 1, 40, 8}, 2)},
  };
  cases[3].src.storage_offset = 37;
  for (const Case& c : cases) {
    for (const TlbConfig& config : {small_tlb(), TlbConfig{}, parse_tlb_config("l1=4:1,l2=16:2,page=128")}) {
      DtlbEstimate model = model_copy_dtlb(c.src, c.dst, config);
      DtlbEstimate ref = brute_force(c.src, c.dst, config);
      EXPECT_EQ(model.accesses, ref.accesses) << c.what;
      EXPECT_EQ(model.l1_misses, ref.l1_misses) << c.what << " " << tlb_config_string(config);
      EXPECT_EQ(model.walks, ref.walks) << c.what << " " << tlb_config_string(config);
      EXPECT_FALSE(model.sampled);
    }
  }
}

TEST(DtlbModel, RandomPermutationsMatchTheReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int64_t> sizes = {static_cast<int64_t>(2 + rng() % 5), static_cast<int64_t>(2 + rng() % 7),
                                  static_cast<int64_t>(2 + rng() % 9)};
    std::vector<int> perm = {0, 1, 2};
    std::shuffle(perm.begin(), perm.end(), rng);
    // Source laid out in `perm` order; destination contiguous.
    std::vector<int64_t> src_strides(3);
    int64_t stride = 1;
    for (int k = 2; k >= 0; --k) {
      src_strides[perm[k]] = stride;
      stride *= sizes[perm[k]];
    }
    TensorInfo src = tensor(sizes, src_strides);
    TensorInfo dst = tensor(sizes, {sizes[1] * sizes[2], sizes[2], 1}, 2);
    TlbConfig config = parse_tlb_config("l1=4:2,l2=8:2,page=64");
    DtlbEstimate model = model_copy_dtlb(src, dst, config);
    DtlbEstimate ref = brute_force(src, dst, config);
    EXPECT_EQ(model.walks, ref.walks) << "trial " << trial;
    EXPECT_EQ(model.l1_misses, ref.l1_misses) << "trial " << trial;
  }
}

TEST(DtlbModel, ContiguousCopyMissesOncePerPagePerStream) {
  const int64_t pages = 1000;
  const int64_t n = pages * 1024;  // f32: 1024 elements a 4 KiB page
  DtlbEstimate est = model_copy_dtlb(tensor({n}, {1}), tensor({n}, {1}, 2), TlbConfig{});
  EXPECT_EQ(est.walks, 2 * pages);
  EXPECT_EQ(est.accesses, 2 * n);
}

TEST(DtlbModel, LargeTransposeWalksOnNearlyEverySourceReadWith4KPages) {
  const int64_t n = 4096;  // a 64 MiB float32 matrix, copied from its transpose
  TensorInfo src = tensor({n, n}, {1, n});
  TensorInfo dst = tensor({n, n}, {n, 1}, 2);
  DtlbEstimate small = model_copy_dtlb(src, dst, TlbConfig{});
  EXPECT_TRUE(small.sampled);
  EXPECT_GT(small.fraction, 0.0);
  EXPECT_LT(small.fraction, 1.0);
  const double reads = static_cast<double>(n) * n;
  EXPECT_GT(static_cast<double>(small.walks), 0.95 * reads) << "a walk per source read";
  EXPECT_LT(static_cast<double>(small.walks), 1.05 * reads + n * n / 1024.0);

  DtlbEstimate huge = model_copy_dtlb(src, dst, parse_tlb_config("l1=32:4,l2=1536:12,page=2m"));
  EXPECT_LT(static_cast<double>(huge.walks), reads / 1000) << "2 MiB pages: a handful of walks";
}

TEST(DtlbModel, SamplingStaysCloseToTheExactFigure) {
  TensorInfo src = tensor({512, 512}, {1, 512});
  TensorInfo dst = tensor({512, 512}, {512, 1}, 2);
  TlbConfig config{};
  DtlbEstimate exact = model_copy_dtlb(src, dst, config, int64_t{1} << 40);
  DtlbEstimate sampled = model_copy_dtlb(src, dst, config, 20000);
  ASSERT_FALSE(exact.sampled);
  ASSERT_TRUE(sampled.sampled);
  EXPECT_EQ(sampled.accesses, exact.accesses) << "scaled exactly by rows";
  EXPECT_NEAR(static_cast<double>(sampled.walks), static_cast<double>(exact.walks), 0.1 * exact.walks);
}

TEST(DtlbModel, ShortRowsAreMergedOrSampledByWholePages) {
  // A (N, 4) contiguous clone is one run: N*4 elements, a walk per page per stream.
  const int64_t n = 1 << 20;
  DtlbEstimate merged = model_copy_dtlb(tensor({n, 4}, {4, 1}), tensor({n, 4}, {4, 1}, 2), TlbConfig{});
  EXPECT_FALSE(merged.sampled);
  EXPECT_EQ(merged.walks, 2 * n * 4 * 4 / 4096);
  // Rows with a gap cannot merge: sampled, and still within a few percent of the exact count.
  TensorInfo src = tensor({1 << 18, 4}, {8, 1});
  TensorInfo dst = tensor({1 << 18, 4}, {4, 1}, 2);
  DtlbEstimate exact = model_copy_dtlb(src, dst, TlbConfig{}, int64_t{1} << 40);
  DtlbEstimate sampled = model_copy_dtlb(src, dst, TlbConfig{}, 5000);
  ASSERT_TRUE(sampled.sampled);
  EXPECT_NEAR(static_cast<double>(sampled.walks), static_cast<double>(exact.walks), 0.05 * exact.walks);
}

TEST(DtlbModel, DoesNotDependOnWhereBuffersLive) {
  TensorInfo src = tensor({64, 48}, {1, 64}, 0x7f0000001000);
  TensorInfo dst = tensor({64, 48}, {48, 1}, 0x7f0000abc000);
  TensorInfo src2 = src, dst2 = dst;
  src2.storage = 0x55550000f000;
  dst2.storage = 0x1000;
  DtlbEstimate a = model_copy_dtlb(src, dst, TlbConfig{});
  DtlbEstimate b = model_copy_dtlb(src2, dst2, TlbConfig{});
  EXPECT_EQ(a.walks, b.walks);
  EXPECT_EQ(a.l1_misses, b.l1_misses);
}

TEST(DtlbModel, ScalarAndEmptyCopies) {
  EXPECT_EQ(model_copy_dtlb(tensor({}, {}), tensor({}, {}, 2), TlbConfig{}).walks, 2);
  EXPECT_EQ(model_copy_dtlb(tensor({0, 4}, {4, 1}), tensor({0, 4}, {4, 1}, 2), TlbConfig{}).accesses, 0);
}

TEST(TlbConfig, ParsesAndPrints) {
  TlbConfig c = parse_tlb_config("l1=32:4,l2=2048:16,page=2m");
  EXPECT_EQ(c.l1_entries, 32);
  EXPECT_EQ(c.l2_ways, 16);
  EXPECT_EQ(c.page_bytes, 2 << 20);
  EXPECT_EQ(tlb_config_string(c), "l1=32:4,l2=2048:16,page=2m");
  EXPECT_EQ(tlb_config_string(parse_tlb_config("")), "l1=64:4,l2=1536:12,page=4k");
  EXPECT_EQ(parse_tlb_config("page=8192").page_bytes, 8192);
}

TEST(TlbConfig, RejectsNonsenseWithTheItem) {
  for (const char* bad : {"l1=64", "l1=64:0", "l1=65:4", "l2=x:4", "page=3k", "page=3000", "tlb=1"}) {
    try {
      parse_tlb_config(bad);
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      // The setting, not a flag: the CLI names --tlb (cli/setting_flags.h).
      EXPECT_THAT(e.what(), ::testing::StartsWith("TLB ")) << bad;
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << bad;
    }
  }
}

TEST(TlbSim, LruEvictsTheLeastRecentlyUsed) {
  TlbConfig c = parse_tlb_config("l1=2:2,l2=8:8,page=4k");  // one first-level set of two
  TlbSim sim(c);
  EXPECT_EQ(sim.access(1), 2);
  EXPECT_EQ(sim.access(2), 2);
  EXPECT_EQ(sim.access(1), 0);
  EXPECT_EQ(sim.access(3), 2);  // evicts 2 from the first level, the least recently used
  EXPECT_EQ(sim.access(1), 0);
  EXPECT_EQ(sim.access(2), 1);  // still in the second level
  EXPECT_EQ(sim.access(4), 2);
}

// A plain two-level LRU, one list per set, most recent first: what TlbSim's shortcuts (set
// masks, the last pages' entries) must reproduce access by access.
class ListTlb {
 public:
  explicit ListTlb(const TlbConfig& c)
      : l1_(static_cast<size_t>(c.l1_entries / c.l1_ways)), l2_(static_cast<size_t>(c.l2_entries / c.l2_ways)),
        ways1_(c.l1_ways), ways2_(c.l2_ways) {}
  int access(uint64_t tag) {
    if (touch(l1_, ways1_, tag)) return 0;
    return touch(l2_, ways2_, tag) ? 1 : 2;
  }

 private:
  static bool touch(std::vector<std::vector<uint64_t>>& sets, int ways, uint64_t tag) {
    auto& set = sets[tag % sets.size()];
    auto it = std::find(set.begin(), set.end(), tag);
    const bool hit = it != set.end();
    if (hit) set.erase(it);
    else if (static_cast<int>(set.size()) == ways) set.pop_back();
    set.insert(set.begin(), tag);
    return hit;
  }
  std::vector<std::vector<uint64_t>> l1_, l2_;
  int ways1_, ways2_;
};

TEST(TlbSim, MatchesAPlainLruOnRandomStreams) {
  // Power-of-two and other set counts, one set, one way; streams that revisit a few pages
  // (as a copy's two streams do) and that wander over many.
  for (const char* config : {"l1=64:4,l2=1536:12", "l1=48:4,l2=1536:16", "l1=2:2,l2=8:8", "l1=4:1,l2=6:3",
                             "l1=64:64,l2=96:2"}) {
    TlbConfig c = parse_tlb_config(config);
    for (uint64_t spread : {3u, 40u, 5000u}) {
      TlbSim sim(c);
      ListTlb ref(c);
      std::mt19937_64 rng(spread);
      uint64_t streams[2] = {0, uint64_t{1} << 40};
      int differ = 0;
      for (int i = 0; i < 200000; ++i) {
        uint64_t& page = streams[i & 1];
        const uint64_t r = rng() % 16;
        if (r < 3) page += 1;                                   // the next page
        else if (r == 3) page = (page & (uint64_t{1} << 40)) + rng() % spread;  // a jump
        differ += sim.access(page) != ref.access(page);
      }
      EXPECT_EQ(differ, 0) << config << " spread " << spread;
    }
  }
}

TEST(TlbSim, SecondLevelSeesOnlyFirstLevelMisses) {
  // Its recency is updated on first-level misses only, as in hardware.
  TlbConfig c = parse_tlb_config("l1=2:2,l2=2:2,page=4k");
  TlbSim sim(c);
  sim.access(1);
  sim.access(2);
  sim.access(1);                // first-level hit: the second level still has 1 as older
  EXPECT_EQ(sim.access(3), 2);  // evicts 1 from the second level, 2 from the first
  EXPECT_EQ(sim.access(2), 1);
}

}  // namespace
}  // namespace layoutprof
