#include "analysis/dtlb_model.h"

#include <algorithm>
#include <sstream>

// {fmt} in this .cpp only (see support/format.cpp: never in a header torch-linked files read).
#include <fmt/format.h>

#include "support/errors.h"
#include "support/setting_error.h"

namespace layoutprof {

namespace {

int64_t parse_bytes(const std::string& text, const std::string& item) {
  if (text == "4k") return 4096;
  if (text == "2m") return 2 << 20;
  if (text == "1g") return 1 << 30;
  if (!text.empty() && text.size() < 16 && std::all_of(text.begin(), text.end(), ::isdigit))
    return std::stoll(text);
  throw SettingError(Setting::tlb, " '" + bounded(item) + "': page size must be 4k, 2m, 1g or a number of bytes");
}

void parse_level(const std::string& value, const std::string& item, int* entries, int* ways) {
  auto colon = value.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no ':'");
    size_t used = 0;
    *entries = std::stoi(value.substr(0, colon), &used);
    if (used != colon) throw std::invalid_argument("junk");
    *ways = std::stoi(value.substr(colon + 1), &used);
    if (used != value.size() - colon - 1) throw std::invalid_argument("junk");
  } catch (const std::logic_error&) {
    throw SettingError(Setting::tlb, " '" + bounded(item) + "': expected ENTRIES:WAYS, e.g. 64:4");
  }
  if (*entries <= 0 || *ways <= 0 || *ways > 64 || *entries % *ways != 0)
    throw SettingError(Setting::tlb, " '" + bounded(item) + "': entries must be a positive multiple of ways (<= 64)");
}

}  // namespace

TlbConfig parse_tlb_config(const std::string& text) {
  TlbConfig c;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    auto eq = item.find('=');
    std::string key = item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "l1") parse_level(value, item, &c.l1_entries, &c.l1_ways);
    else if (key == "l2") parse_level(value, item, &c.l2_entries, &c.l2_ways);
    else if (key == "page") c.page_bytes = parse_bytes(value, item);
    else throw SettingError(Setting::tlb, " '" + bounded(item) + "': expected l1=E:W, l2=E:W or page=4k|2m");
  }
  if (c.page_bytes <= 0 || (c.page_bytes & (c.page_bytes - 1)) != 0)
    throw SettingError(Setting::tlb, " page size must be a power of two");
  return c;
}

std::string tlb_config_string(const TlbConfig& c) {
  const std::string page = c.page_bytes == 4096        ? "4k"
                           : c.page_bytes == (2 << 20) ? "2m"
                           : c.page_bytes == (1 << 30) ? "1g"
                                                       : std::to_string(c.page_bytes);
  return fmt::format("l1={}:{},l2={}:{},page={}", c.l1_entries, c.l1_ways, c.l2_entries, c.l2_ways, page);
}

TlbSim::TlbSim(const TlbConfig& c) {
  l1_.ways = c.l1_ways;
  l1_.sets = c.l1_entries / c.l1_ways;
  l2_.ways = c.l2_ways;
  l2_.sets = c.l2_entries / c.l2_ways;
  for (Level* l : {&l1_, &l2_}) {
    l->entries.assign(static_cast<size_t>(l->sets) * l->ways, Level::Entry{});
    const auto sets = static_cast<uint64_t>(l->sets);
    l->set_mask = (sets & (sets - 1)) == 0 ? sets - 1 : 0;
  }
}

size_t TlbSim::Level::lookup(uint64_t tag, uint64_t now, bool* hit) {
  const uint64_t set_index = set_mask || sets == 1 ? tag & set_mask : tag % static_cast<uint64_t>(sets);
  Entry* set = entries.data() + static_cast<size_t>(set_index) * ways;
  const uint64_t stored = tag + 1;
  size_t victim = 0;
  for (size_t w = 0; w < static_cast<size_t>(ways); ++w) {
    if (set[w].tag == stored) {
      set[w].stamp = now;
      *hit = true;
      return static_cast<size_t>(set - entries.data()) + w;
    }
    if (set[w].stamp < set[victim].stamp) victim = w;
  }
  set[victim].tag = stored;
  set[victim].stamp = now;
  *hit = false;
  return static_cast<size_t>(set - entries.data()) + victim;
}

int TlbSim::access(uint64_t page_tag) {
  ++clock_;
  const uint64_t stored = page_tag + 1;
  for (Recent& r : recent_)
    if (r.tag == stored && l1_.entries[r.entry].tag == stored) {
      l1_.entries[r.entry].stamp = clock_;
      return 0;
    }
  bool hit = false;
  const size_t entry = l1_.lookup(page_tag, clock_, &hit);
  Recent& r = recent_[next_recent_];
  next_recent_ ^= 1;
  r.tag = stored;
  r.entry = entry;
  if (hit) return 0;
  l2_.lookup(page_tag, clock_, &hit);
  return hit ? 1 : 2;
}

namespace {

// Both buffers in one page-number space, far apart, each starting on a page boundary.
constexpr uint64_t kDstBase = uint64_t{1} << 40;

struct Walker {
  const TensorInfo& src;
  const TensorInfo& dst;
  const TlbConfig& config;
  // The copy's dims in the destination's physical order, outermost first, size-1 dims
  // dropped and neighbours merged where both tensors lay them out as one (as TensorIterator
  // does): a (N, 4) row-major copy is one run of 4N elements, not N short rows.
  std::vector<int64_t> size, sstride, dstride;
  int64_t inner = 1;  // elements in a row: the innermost merged dim
  int64_t rows = 1;
  int page_shift = -1;  // log2(page_bytes) where it is a power of two (parse_tlb_config's), else -1
  TlbSim sim;
  int64_t accesses = 0, l1 = 0, walks = 0;

  Walker(const TensorInfo& s, const TensorInfo& d, const TlbConfig& c)
      : src(s), dst(d), config(c), sim(c) {
    std::vector<int> order = d.layout().order;
    if (order.size() != d.sizes().size()) {
      order.resize(d.sizes().size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    }
    for (int dim : order) {
      if (d.sizes()[dim] == 1) continue;
      if (!size.empty() && sstride.back() == s.strides()[dim] * d.sizes()[dim] &&
          dstride.back() == d.strides()[dim] * d.sizes()[dim]) {
        size.back() *= d.sizes()[dim];
        sstride.back() = s.strides()[dim];
        dstride.back() = d.strides()[dim];
        continue;
      }
      size.push_back(d.sizes()[dim]);
      sstride.push_back(s.strides()[dim]);
      dstride.push_back(d.strides()[dim]);
    }
    if (!size.empty()) inner = size.back();
    rows = inner == 0 ? 0 : d.numel() / inner;
    if (c.page_bytes > 0 && (c.page_bytes & (c.page_bytes - 1)) == 0)
      while ((int64_t{1} << ++page_shift) < c.page_bytes) {
      }
  }

  // The page of a byte offset, and the offset within it (offsets below a buffer's start,
  // from negative strides, as C++ division makes them).
  int64_t page_of(int64_t at) const {
    return at >= 0 && page_shift >= 0 ? at >> page_shift : at / config.page_bytes;
  }
  int64_t in_page(int64_t at) const {
    return at >= 0 && page_shift >= 0 ? at & (config.page_bytes - 1) : at % config.page_bytes;
  }

  void touch(uint64_t tag) {
    int level = sim.access(tag);
    l1 += level > 0;
    walks += level == 2;
  }

  // Byte offsets of a row's first element in both buffers.
  void row_base(int64_t row, int64_t* sb, int64_t* db) const {
    int64_t so = src.storage_offset, d = dst.storage_offset;
    // The outer dims, innermost first (all but the last).
    for (size_t k = size.empty() ? 0 : size.size() - 1; k-- > 0;) {
      int64_t idx = row % size[k];
      row /= size[k];
      so += idx * sstride[k];
      d += idx * dstride[k];
    }
    *sb = so * src.elem_size();
    *db = d * dst.elem_size();
  }

  // Elements from byte offset `at` (stride `step` bytes) that stay on the current page.
  int64_t run(int64_t at, int64_t step, int64_t left) const {
    if (step == 0) return left;
    int64_t room = config.page_bytes - in_page(at);
    return std::min(left, (room + step - 1) / step);
  }

  // Simulates one row, compressing runs where both streams stay on one page: after the first
  // read/write pair, repeats hit the first level and change no LRU order that matters, as
  // long as a set holds two pages (ways >= 2).
  void simulate_row(int64_t row) {
    int64_t sb, db;
    row_base(row, &sb, &db);
    int64_t sstep = size.empty() ? 0 : sstride.back() * src.elem_size();
    int64_t dstep = size.empty() ? 0 : dstride.back() * dst.elem_size();
    bool compress = config.l1_ways >= 2;
    for (int64_t i = 0; i < inner;) {
      int64_t s = sb + i * sstep, d = db + i * dstep;
      int64_t len = compress ? std::min(run(s, sstep, inner - i), run(d, dstep, inner - i)) : 1;
      touch(static_cast<uint64_t>(page_of(s)));
      touch(kDstBase + static_cast<uint64_t>(page_of(d)));
      accesses += 2 * len;
      i += len;
    }
  }

  // Segments a row is cut into, for the cost estimate.
  int64_t segments_per_row() const {
    if (size.empty()) return 1;
    int64_t bytes = inner * std::max<int64_t>(1, std::max(std::abs(sstride.back()) * src.elem_size(),
                                                           std::abs(dstride.back()) * dst.elem_size()));
    return std::min<int64_t>(inner, bytes / config.page_bytes + 2);
  }

  // Rows a sampling window must hold so that it spans whole pages of both streams: windows
  // shorter than a page would count the same page's miss once per window.
  int64_t window_rows() const {
    int64_t w = 16;
    if (size.size() >= 2) {
      const size_t o = size.size() - 2;
      const int64_t row_stride[] = {std::abs(sstride[o]) * src.elem_size(), std::abs(dstride[o]) * dst.elem_size()};
      const int64_t row_span[] = {inner * std::abs(sstride.back()) * src.elem_size(),
                                  inner * std::abs(dstride.back()) * dst.elem_size()};
      for (int k = 0; k < 2; ++k)  // short rows of a stream share its pages
        if (row_stride[k] > 0 && row_span[k] < config.page_bytes)
          w = std::max(w, 2 * ((config.page_bytes + row_stride[k] - 1) / row_stride[k]));
    }
    return std::min(w, std::max<int64_t>(rows, 1));
  }
};

}  // namespace

DtlbEstimate model_copy_dtlb(const TensorInfo& src, const TensorInfo& dst, const TlbConfig& config,
                             int64_t budget) {
  DtlbEstimate est;
  if (src.sizes().size() != dst.sizes().size() || src.strides().size() != src.sizes().size() ||
      dst.strides().size() != dst.sizes().size() || dst.numel() == 0)
    return est;
  Walker w(src, dst, config);
  int64_t cost = w.rows * w.segments_per_row();
  if (cost <= budget) {
    for (int64_t r = 0; r < w.rows; ++r) w.simulate_row(r);
    est.accesses = w.accesses;
    est.l1_misses = w.l1;
    est.walks = w.walks;
    return est;
  }
  // Windows of consecutive rows (whole pages' worth), so that reuse between neighbouring rows
  // is kept, spread evenly over the copy. The first window is counted as it is: it pays the
  // cold misses of pages every row shares (a transposed source that fits in the TLB), which
  // must not be scaled. The other windows stand for the rows between them.
  const int64_t window = w.window_rows();
  const int64_t windows = (w.rows + window - 1) / window;
  const int64_t affordable = std::max<int64_t>(2, budget / std::max<int64_t>(1, window * w.segments_per_row()));
  const int64_t every = std::max<int64_t>(1, (windows - 1 + affordable - 2) / (affordable - 1));
  const int64_t first_rows = std::min(w.rows, window);
  for (int64_t r = 0; r < first_rows; ++r) w.simulate_row(r);
  const int64_t first_accesses = w.accesses, first_l1 = w.l1, first_walks = w.walks;
  int64_t simulated = 0;
  for (int64_t k = every; k < windows; k += every) {
    for (int64_t r = k * window; r < std::min(w.rows, (k + 1) * window); ++r) {
      w.simulate_row(r);
      ++simulated;
    }
  }
  // Without a second window (a copy of very few, very long rows), the first stands for all.
  const bool alone = simulated == 0;
  const int64_t base_rows = alone ? 0 : first_rows;
  const int64_t a0 = alone ? 0 : first_accesses, m0 = alone ? 0 : first_l1, w0 = alone ? 0 : first_walks;
  double scale = static_cast<double>(w.rows - base_rows) /
                 static_cast<double>(alone ? first_rows : simulated);
  auto scaled = [&](int64_t first, int64_t total) {
    return first + static_cast<int64_t>(static_cast<double>(total - first) * scale + 0.5);
  };
  est.accesses = scaled(a0, w.accesses);
  est.l1_misses = scaled(m0, w.l1);
  est.walks = scaled(w0, w.walks);
  simulated += first_rows;
  est.sampled = true;
  est.fraction = static_cast<double>(simulated) / static_cast<double>(w.rows);
  return est;
}

}  // namespace layoutprof
