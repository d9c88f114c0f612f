// Tensors as the hot path records them: each input and output of an op appended to its thread's
// buffer as a TensorInfo, its shape interned through the thread's ShapeCache. Included only by
// the torch-side translation units.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "core/layout.h"
#include "core/pools.h"
#include "record/thread_buffer.h"

namespace layoutprof {

const char* dtype_name(c10::ScalarType t);  // "f32", "i64", ...

// Tensor shapes seen by one thread, found by what the hot path reads from the TensorImpl
// without building anything: dtype, device, element size and the dims. A hit costs a hash
// and a compare of the dims; a miss (once per distinct shape and thread) interns the shape.
class ShapeCache {
 public:
  ShapeCache() : slots_(1024) {}

  // As NameTable::forget_if_stale: the cached shapes of an ended epoch are gone.
  void forget_if_stale() {
    if (!epoch_.ended()) return;
    std::vector<Slot>(1024).swap(slots_);
    used_ = 0;
  }

  const TensorShape* find(c10::ScalarType dtype, c10::Device device, int elem_size, bool known,
                          c10::IntArrayRef sizes, c10::IntArrayRef strides, bool strided) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(static_cast<uint64_t>(dtype) | static_cast<uint64_t>(device.type()) << 8 |
        static_cast<uint64_t>(static_cast<uint8_t>(device.index())) << 16 |
        static_cast<uint64_t>(elem_size) << 24 | static_cast<uint64_t>(known) << 40 |
        static_cast<uint64_t>(strided) << 41 | static_cast<uint64_t>(sizes.size()) << 42);
    for (int64_t v : sizes) mix(static_cast<uint64_t>(v));
    if (strided)
      for (int64_t v : strides) mix(static_cast<uint64_t>(v));
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (!slot.shape) break;
      if (slot.hash == h && slot.dtype == dtype && slot.device == device && slot.known == known &&
          slot.strided == strided && slot.shape->elem_size == elem_size &&
          std::equal(sizes.begin(), sizes.end(), slot.shape->sizes.begin(), slot.shape->sizes.end()) &&
          (!strided || std::equal(strides.begin(), strides.end(), slot.shape->strides.begin(),
                                  slot.shape->strides.end())))
        return slot.shape;
    }
    return add(h, dtype, device, elem_size, known, sizes, strides, strided);
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    const TensorShape* shape = nullptr;
    c10::ScalarType dtype = c10::ScalarType::Undefined;
    c10::Device device = c10::Device(c10::DeviceType::CPU);
    bool known = false;
    bool strided = false;
  };
  // A miss: the shape interned and cached under hash `h`.
  const TensorShape* add(uint64_t h, c10::ScalarType dtype, c10::Device device, int elem_size, bool known,
                         c10::IntArrayRef sizes, c10::IntArrayRef strides, bool strided);
  void insert(const Slot& slot);
  void place(const Slot& slot);
  std::vector<Slot> slots_;
  size_t used_ = 0;
  EpochStamp epoch_;
};

inline void append_tensor(ThreadBuffer& b, const at::Tensor& t, int arg) {
  if (!t.defined()) return;
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  TensorInfo r;
  r.arg = std::min(arg, 127);
  try {
    const c10::ScalarType dtype = c10::typeMetaToScalarType(impl->dtype());
    const int elem_size = static_cast<int>(impl->dtype().itemsize());
    // Nested and other tensors without plain sizes throw here: they are kept as "unknown".
    c10::IntArrayRef sizes = impl->sizes();
    if (sizes.size() > 64) sizes = sizes.slice(0, 64);
    c10::IntArrayRef strides;
    const bool strided = impl->layout() == c10::kStrided;
    if (strided) {
      strides = impl->strides().slice(0, sizes.size());
      r.storage_offset = impl->storage_offset();
      if (impl->has_storage()) {
        const c10::Storage& storage = impl->storage();
        r.storage = reinterpret_cast<uint64_t>(storage.data());
        r.storage_id = reinterpret_cast<uint64_t>(storage.unsafeGetStorageImpl());
      }
    }
    const c10::VariableVersion& version = impl->version_counter();
    if (version.enabled()) r.version = version.current_version();
    r.shape = b.shapes->find(dtype, impl->device(), elem_size, true, sizes, strides, strided);
  } catch (const std::exception&) {
    r.storage_offset = 0;
    r.storage = 0;
    r.storage_id = 0;
    r.shape = b.shapes->find(c10::ScalarType::Undefined, c10::Device(c10::DeviceType::CPU), 0, false,
                             {}, {}, false);
  }
  b.tensors.push_back(r);
}

// Calls f on each tensor a value holds: itself, or the tensors of a list (tensor lists
// included, without copying them).
template <typename F>
void for_each_tensor(const c10::IValue& value, F&& f) {
  if (value.isTensor()) {
    f(value.toTensor());
  } else if (value.isList()) {
    for (const c10::IValue& item : value.toListRef())
      if (item.isTensor()) f(item.toTensor());
  }
}

inline void append_value(ThreadBuffer& b, const c10::IValue& value, int arg) {
  for_each_tensor(value, [&](const at::Tensor& t) { append_tensor(b, t, arg); });
}

template <typename Values>
size_t count_tensors(Values values) {
  size_t n = 0;
  for (const c10::IValue& v : values) for_each_tensor(v, [&n](const at::Tensor&) { ++n; });
  return n;
}

// Ops called by the TorchScript interpreter see the interpreter's whole stack as their inputs
// (and outputs): their own arguments are the last `declared` values, num_inputs() and
// num_outputs() by their schema (a string-named RecordFunction declares all it holds).
template <typename Values>
Values own_values(Values values, size_t declared) {
  return values.size() > declared ? values.slice(values.size() - declared) : values;
}

}  // namespace layoutprof
