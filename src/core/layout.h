// Layout classes of a strided tensor: the vocabulary of the whole tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/str.h"

namespace layoutprof {

enum class LayoutClass {
  contiguous,
  channels_last,
  channels_last_3d,
  permuted,     // dense and non-overlapping, in another dim order
  strided,      // non-overlapping with gaps (slice, narrow, step)
  broadcast,    // a zero stride on a dim of size > 1
  overlapping,  // some elements share memory
  unknown,      // not a strided tensor (mkldnn, sparse, ...): no strides to classify
};

struct Layout {
  LayoutClass cls = LayoutClass::contiguous;
  // Physical dim order, outermost first; meaningful for `permuted` (and the dense formats).
  std::vector<int> order;
};

// True when the dims taken in `order` (outermost first) tile memory densely; dims of size 1
// are ignored.
bool is_dense_in_order(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                       const std::vector<int>& order);

// True when the strides are those of no tensor `.contiguous()` or `.contiguous(memory_format=
// torch.channels_last)` makes, though they only differ from them on dims of size 1 (a permute of
// a tensor with such dims leaves them): the class ignores those dims, an exact stride compare
// (DDP's) does not, and `.contiguous()` keeps them (the tensor is contiguous already).
bool odd_size1_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);

// Classifies sizes/strides. Dims of size 1 never decide the class.
Layout classify_layout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides);

const char* layout_class_name(LayoutClass c);
LayoutClass layout_class_from_name(const std::string& name);  // throws std::invalid_argument

// "permuted(0,2,1)" for permuted layouts, the plain class name otherwise.
std::string layout_label(const Layout& layout);
// Parses what layout_label wrote.
Layout layout_from_label(const std::string& label);

// True when the class needs no copy to be read as dense row-major memory.
inline bool is_contiguous_class(LayoutClass c) { return c == LayoutClass::contiguous; }

// Strides over the dims of size > 1 only, paired with those sizes: two tensors with equal
// "effective" shapes and strides walk memory identically.
std::vector<std::pair<int64_t, int64_t>> effective_dims(const std::vector<int64_t>& sizes,
                                                        const std::vector<int64_t>& strides);

int64_t numel_of(const std::vector<int64_t>& sizes);

// What tensors share: sizes, strides, dtype, device and the layout they make. Most tensors
// of a model have one of a few hundred of these, so each is stored once (intern_shape; for
// the process's life or its epoch's: core/pools.h) and a TensorInfo points to it.
struct TensorShape {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // empty for tensors without strides
  Str dtype;   // f32, f64, f16, bf16, i64, i32, i16, i8, u8, bool, c64, ... ("unknown")
  Str device;  // cpu, cuda:0, ...
  int elem_size = 0;
  Layout layout;
  Str label;          // layout_label(layout), made once when the shape is interned
  int64_t numel = 1;  // product of sizes (saturating: a hostile report cannot overflow it)
};

// The interned copy of `shape`, its layout classified from its sizes and strides (unless
// `classified`: the layout as given, e.g. read from a report). Thread-safe.
const TensorShape* intern_shape(TensorShape shape, bool classified = false);
// The shape of a default TensorInfo: no dims, no dtype.
const TensorShape* empty_shape();

// One tensor argument or result of an op, as recorded: plain data, no torch types.
struct TensorInfo {
  static constexpr uint32_t kNoVersion = 0xffffffffu;
  int arg = 0;  // position in the op's argument / result list (tensor lists share one)
  // The tensor's version counter as the op began (inputs) or ended (outputs): in-place writes
  // bump it, and every view of a storage shares its base's. kNoVersion: not tracked (an
  // inference tensor, a report read from JSON).
  uint32_t version = kNoVersion;
  int64_t storage_offset = 0;
  uint64_t storage = 0;  // address of the storage's data: where its elements are
  // The storage itself (its StorageImpl), not its data's address: two tensors share one
  // exactly when they alias. Kept in memory only (a report read from JSON has 0).
  uint64_t storage_id = 0;
  const TensorShape* shape = empty_shape();  // never null

  const std::vector<int64_t>& sizes() const { return shape->sizes; }
  const std::vector<int64_t>& strides() const { return shape->strides; }
  const std::string& dtype() const { return shape->dtype; }
  const std::string& device() const { return shape->device; }
  int elem_size() const { return shape->elem_size; }
  const Layout& layout() const { return shape->layout; }
  Str label() const { return shape->label; }  // layout_label(layout())
  int64_t numel() const { return shape->numel; }
  int64_t bytes() const {  // saturating
    int64_t b = 0;
    return __builtin_mul_overflow(shape->numel, shape->elem_size, &b) ? INT64_MAX : b;
  }

  // Interns the shape (and classifies it).
  void set_shape(std::vector<int64_t> sizes, std::vector<int64_t> strides, Str dtype,
                 Str device = "cpu", int elem_size = 4);
};

}  // namespace layoutprof
