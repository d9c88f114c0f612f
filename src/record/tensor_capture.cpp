#include "record/tensor_capture.h"

#include <memory>
#include <mutex>

#include "record/tensor_info.h"

namespace layoutprof {

const char* dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Float: return "f32";
    case c10::ScalarType::Double: return "f64";
    case c10::ScalarType::Half: return "f16";
    case c10::ScalarType::BFloat16: return "bf16";
    case c10::ScalarType::Long: return "i64";
    case c10::ScalarType::Int: return "i32";
    case c10::ScalarType::Short: return "i16";
    case c10::ScalarType::Char: return "i8";
    case c10::ScalarType::Byte: return "u8";
    case c10::ScalarType::Bool: return "bool";
    case c10::ScalarType::ComplexFloat: return "c64";
    case c10::ScalarType::ComplexDouble: return "c128";
    default: return c10::toString(t);
  }
}

TensorInfo describe_tensor(const at::Tensor& t, int arg) {
  TensorInfo info;
  info.arg = arg;
  std::vector<int64_t> strides;
  if (t.layout() == c10::kStrided) {
    strides = t.strides().vec();
    info.storage_offset = t.storage_offset();
    if (t.has_storage()) {
      info.storage = reinterpret_cast<uint64_t>(t.storage().data());
      info.storage_id = reinterpret_cast<uint64_t>(t.storage().unsafeGetStorageImpl());
    }
  }
  const c10::VariableVersion& version = t.unsafeGetTensorImpl()->version_counter();
  if (version.enabled()) info.version = version.current_version();
  info.set_shape(t.sizes().vec(), std::move(strides), dtype_name(t.scalar_type()), t.device().str(),
                 static_cast<int>(t.element_size()));
  return info;
}

const TensorShape* ShapeCache::add(uint64_t h, c10::ScalarType dtype, c10::Device device, int elem_size, bool known,
                                   c10::IntArrayRef sizes, c10::IntArrayRef strides, bool strided) {
  TensorShape shape;
  shape.sizes = sizes.vec();
  if (strided) shape.strides = strides.vec();
  shape.dtype = known ? dtype_name(dtype) : "unknown";
  shape.device = device.str();
  shape.elem_size = elem_size;
  if (!known) shape.layout.cls = LayoutClass::unknown;
  const TensorShape* interned = intern_shape(std::move(shape), !known);
  insert({h, interned, dtype, device, known, strided});
  return interned;
}

void ShapeCache::insert(const Slot& slot) {
  if (++used_ * 2 > slots_.size()) {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    used_ = 1;
    for (const Slot& s : old)
      if (s.shape) place(s), ++used_;
  }
  place(slot);
}

void ShapeCache::place(const Slot& slot) {
  const size_t mask = slots_.size() - 1;
  size_t i = slot.hash & mask;
  while (slots_[i].shape) i = (i + 1) & mask;
  slots_[i] = slot;
}

ShapeCache* thread_shape_cache() {
  // Kept for the life of the process, like the threads' name tables: a thread's buffers of
  // every session share its cache.
  static std::mutex* const mutex = new std::mutex;
  static auto* const caches = new std::vector<std::unique_ptr<ShapeCache>>;
  thread_local ShapeCache* mine = nullptr;
  if (!mine) {
    std::lock_guard<std::mutex> lock(*mutex);
    caches->push_back(std::make_unique<ShapeCache>());
    mine = caches->back().get();
  }
  mine->forget_if_stale();
  return mine;
}

}  // namespace layoutprof
