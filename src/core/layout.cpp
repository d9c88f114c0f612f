#include "core/layout.h"
#include "core/pools.h"
#include "core/trace.h"
#include "support/errors.h"

#include <fmt/format.h>  // in a .cpp of a torch-free layer only (src/support/format.cpp says why)
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace layoutprof {

int64_t numel_of(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::vector<std::pair<int64_t, int64_t>> effective_dims(const std::vector<int64_t>& sizes,
                                                        const std::vector<int64_t>& strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (size_t d = 0; d < sizes.size() && d < strides.size(); ++d)
    if (sizes[d] != 1) dims.emplace_back(sizes[d], strides[d]);
  return dims;
}

bool is_dense_in_order(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                    const std::vector<int>& order) {
  int64_t expected = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (sizes[*it] == 1) continue;
    if (strides[*it] != expected) return false;
    expected *= sizes[*it];
  }
  return true;
}

bool odd_size1_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (sizes.size() != strides.size() || std::find(sizes.begin(), sizes.end(), 1) == sizes.end()) return false;
  const size_t n = sizes.size();
  // Physical orders of the formats, outermost first: row-major; channels last (N, spatial, C).
  std::vector<std::vector<size_t>> orders(1, std::vector<size_t>(n));
  std::iota(orders[0].begin(), orders[0].end(), size_t{0});
  if (n == 4 || n == 5) {
    std::vector<size_t> last{0};
    for (size_t d = 2; d < n; ++d) last.push_back(d);
    last.push_back(1);
    orders.push_back(last);
  }
  for (const std::vector<size_t>& order : orders) {
    int64_t step = 1;
    bool same = true;
    for (auto d = order.rbegin(); d != order.rend() && same; ++d) {
      same = strides[*d] == step;
      step *= std::max<int64_t>(sizes[*d], 1);
    }
    if (same) return false;
  }
  const Layout l = classify_layout(sizes, strides);
  return l.cls == LayoutClass::contiguous || l.cls == LayoutClass::channels_last || l.cls == LayoutClass::channels_last_3d;
}

namespace {

std::vector<int> identity_order(size_t n) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

// Physical order of the dims: by decreasing stride; dims of size 1 keep their logical place
// relative to each other and sort after equal-stride dims so they never change the label.
std::vector<int> physical_order(const std::vector<int64_t>& sizes,
                                const std::vector<int64_t>& strides) {
  std::vector<int> big;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] != 1) big.push_back(static_cast<int>(d));
  std::stable_sort(big.begin(), big.end(),
                   [&](int a, int b) { return strides[a] > strides[b]; });
  // Put size-1 dims back at their own index so that e.g. (1,C,H,W) views read naturally.
  std::vector<int> order;
  size_t next_big = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1)
      order.push_back(static_cast<int>(d));
    else
      order.push_back(big[next_big++]);
  }
  return order;
}

}  // namespace

Layout classify_layout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  Layout out;
  const size_t n = sizes.size();
  out.order = identity_order(n);
  if (strides.size() != n) {
    out.cls = LayoutClass::unknown;
    return out;
  }
  if (numel_of(sizes) <= 1) return out;  // nothing to lay out

  for (size_t d = 0; d < n; ++d)
    if (sizes[d] > 1 && strides[d] == 0) {
      out.cls = LayoutClass::broadcast;
      return out;
    }
  if (is_dense_in_order(sizes, strides, out.order)) return out;
  if (n == 4 && is_dense_in_order(sizes, strides, {0, 2, 3, 1})) {
    out.cls = LayoutClass::channels_last;
    out.order = {0, 2, 3, 1};
    return out;
  }
  if (n == 5 && is_dense_in_order(sizes, strides, {0, 2, 3, 4, 1})) {
    out.cls = LayoutClass::channels_last_3d;
    out.order = {0, 2, 3, 4, 1};
    return out;
  }

  std::vector<int> order = physical_order(sizes, strides);
  if (is_dense_in_order(sizes, strides, order)) {
    out.cls = LayoutClass::permuted;
    out.order = order;
    return out;
  }
  // Not dense: gaps if every dim's stride spans at least the extent of the dims inside it.
  std::vector<int> big;
  for (int d : order)
    if (sizes[d] != 1) big.push_back(d);
  int64_t inner_extent = 1;  // elements spanned by the dims inside the current one
  bool overlap = false;
  for (auto it = big.rbegin(); it != big.rend(); ++it) {
    int64_t stride = strides[*it] < 0 ? -strides[*it] : strides[*it];
    if (stride < inner_extent) {
      overlap = true;
      break;
    }
    inner_extent = stride * (sizes[*it] - 1) + 1;
  }
  out.cls = overlap ? LayoutClass::overlapping : LayoutClass::strided;
  out.order = order;
  return out;
}

const char* layout_class_name(LayoutClass c) {
  switch (c) {
    case LayoutClass::contiguous: return "contiguous";
    case LayoutClass::channels_last: return "channels_last";
    case LayoutClass::channels_last_3d: return "channels_last_3d";
    case LayoutClass::permuted: return "permuted";
    case LayoutClass::strided: return "strided";
    case LayoutClass::broadcast: return "broadcast";
    case LayoutClass::overlapping: return "overlapping";
    case LayoutClass::unknown: return "unknown";
  }
  return "unknown";
}

LayoutClass layout_class_from_name(const std::string& name) {
  for (auto c : {LayoutClass::contiguous, LayoutClass::channels_last,
                 LayoutClass::channels_last_3d, LayoutClass::permuted, LayoutClass::strided,
                 LayoutClass::broadcast, LayoutClass::overlapping, LayoutClass::unknown})
    if (name == layout_class_name(c)) return c;
  throw std::invalid_argument("unknown layout class '" + name + "'");
}

std::string layout_label(const Layout& layout) {
  if (layout.cls != LayoutClass::permuted) return layout_class_name(layout.cls);
  return fmt::format("permuted({})", fmt::join(layout.order, ","));
}

Layout layout_from_label(const std::string& label) {
  Layout layout;
  auto paren = label.find('(');
  layout.cls = layout_class_from_name(label.substr(0, paren));
  if (paren != std::string::npos) {
    if (label.back() != ')') throw std::invalid_argument("bad layout label '" + label + "'");
    std::stringstream dims(label.substr(paren + 1, label.size() - paren - 2));
    std::string item;
    while (std::getline(dims, item, ',')) layout.order.push_back(std::stoi(item));
  }
  return layout;
}

const TensorShape* intern_shape(TensorShape shape, bool classified) {
  if (!classified) shape.layout = classify_layout(shape.sizes, shape.strides);
  // Saturating, and 0 for a negative size: the sizes may come from a hostile report.
  int64_t n = 1;
  bool saturated = false;
  for (int64_t s : shape.sizes) {
    if (s <= 0) {
      n = 0;
      break;
    }
    if (!saturated && __builtin_mul_overflow(n, s, &n)) saturated = true;
  }
  shape.numel = n == 0 ? 0 : saturated ? std::numeric_limits<int64_t>::max() : n;
  return pooled_shape(std::move(shape));
}

const TensorShape* empty_shape() {
  // A named shape, not a temporary: GCC 12 at -O2 takes the moved-from temporary's vectors
  // for uninitialized (-Wmaybe-uninitialized, a false positive).
  static const TensorShape* const empty = [] {
    TensorShape none;
    return pooled_shape(std::move(none), /*for_good=*/true);  // whenever first asked
  }();
  return empty;
}

void TensorInfo::set_shape(std::vector<int64_t> sizes, std::vector<int64_t> strides, Str dtype,
                           Str device, int elem_size) {
  TensorShape s;
  s.sizes = std::move(sizes);
  s.strides = std::move(strides);
  s.dtype = dtype;
  s.device = device;
  s.elem_size = elem_size;
  shape = intern_shape(std::move(s));
}

TensorList TensorStore::add(const TensorInfo* first, size_t n) {
  if (n == 0) return {};
  if (!open_ || blocks_.back().capacity() - blocks_.back().size() < n) {
    blocks_.emplace_back();
    blocks_.back().reserve(std::max<size_t>(n, 4096));
    open_ = true;
  }
  MappedVector<TensorInfo>& block = blocks_.back();
  const TensorInfo* at = block.data() + block.size();
  block.insert(block.end(), first, first + n);  // within capacity: nothing moves
  return {at, n};
}

void TensorStore::park(SpillFile& file, std::vector<ParkedPages>& parked) {
  for (MappedVector<TensorInfo>& block : blocks_) park_pages(block, file, parked);
}

void Call::park() {
  if (parked_in_) return;
  std::shared_ptr<SpillFile> file = SpillFile::get();
  if (!file) return;  // no spill file: everything stays in memory (SpillFile::note says so)
  parked_in_ = file;
  tensors->park(*file, parked_);
  if (sites_recorded || events.empty()) return;  // match_by_site reads the events' sites
  keys_.reserve(events.size());
  for (const OpEvent& e : events) keys_.push_back({e.name, e.parent, e.thread});
  const size_t before = parked_.size();
  park_pages(events, *file, parked_);
  if (parked_.size() == before) MappedVector<OpKey>().swap(keys_);  // small, or the file is full
}

void Call::unpark() {
  MappedVector<OpKey>().swap(keys_);  // first: the events come back into the room they leave
  for (const ParkedPages& p : parked_)
    if (!parked_in_->unpark(p.offset, p.at, p.bytes))
      throw OutputError("the first recorded call's events could not be read back from the spill file (" +
                        SpillFile::note() + ")");
  parked_.clear();
  parked_in_.reset();
}

const TensorInfo* TensorStore::adopt(MappedVector<TensorInfo> block) {
  blocks_.push_back(std::move(block));
  open_ = false;
  return blocks_.back().data();
}

}  // namespace layoutprof
