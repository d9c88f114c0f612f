#include "runner/pt2_tensors.h"

#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "pt2/archive.h"
#include "runner/pt2_values.h"
#include "support/errors.h"

namespace layoutprof {

namespace {

std::vector<int64_t> constants(const std::vector<pt2::SymIntValue>& values, const std::string& name) {
  std::vector<int64_t> out;
  for (const pt2::SymIntValue& v : values) {
    if (!v.value) throw ModelLoadError("stored tensor '" + bounded(name) + "' has a symbolic size");
    out.push_back(*v.value);
  }
  return out;
}

c10::Storage read_storage(const pt2::Archive& archive, const std::string& entry) {
  const uint64_t bytes = archive.size(entry);
  c10::Storage storage(c10::Storage::use_byte_size_t(), static_cast<size_t>(bytes), c10::GetDefaultCPUAllocator(),
                       /*resizable=*/false);
  archive.read_into(entry, storage.mutable_data(), bytes);
  return storage;
}

// The tensor's view of its storage, checked against the storage's bytes.
at::Tensor view_of(const c10::Storage& storage, const pt2::StoredTensor& stored, const std::string& name) {
  if (stored.meta.layout != 7) throw ModelLoadError("stored tensor '" + bounded(name) + "' is not strided");
  const std::vector<int64_t> sizes = constants(stored.meta.sizes, name), strides = constants(stored.meta.strides, name);
  const int64_t offset = stored.meta.storage_offset.value.value_or(0);
  const c10::ScalarType dtype = scalar_type_of(stored.meta.dtype);
  if (sizes.size() != strides.size()) throw ModelLoadError("stored tensor '" + bounded(name) + "': sizes and strides differ in rank");
  at::Tensor t = at::empty({0}, at::TensorOptions().dtype(dtype));
  int64_t last = offset;  // the last element it reads
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    empty = empty || sizes[d] == 0;
    last += (sizes[d] - 1) * strides[d];
  }
  if (!empty && (last + 1) * static_cast<int64_t>(c10::elementSize(dtype)) > static_cast<int64_t>(storage.nbytes()))
    throw ModelLoadError("stored tensor '" + bounded(name) + "' reads past its " + std::to_string(storage.nbytes()) +
                         " stored bytes");
  t.set_(storage, offset, sizes, strides);
  return t;
}

}  // namespace

std::map<std::string, at::Tensor> load_stored_tensors(const pt2::Archive& archive,
                                                      const std::map<std::string, pt2::StoredTensor>& stored) {
  std::map<std::string, c10::Storage> storages;  // by entry: tied weights share theirs
  std::map<std::string, at::Tensor> tensors;
  for (const auto& [name, s] : stored) {
    auto it = storages.find(s.entry);
    if (it == storages.end()) it = storages.emplace(s.entry, read_storage(archive, s.entry)).first;
    at::Tensor t = view_of(it->second, s, name);
    if (s.meta.requires_grad) t.requires_grad_(true);
    tensors.emplace(name, std::move(t));
  }
  return tensors;
}

std::vector<c10::IValue> load_sample_inputs(const pt2::Archive& archive, const std::string& entry,
                                            const std::vector<std::string>& names) {
  if (entry.empty()) return {};
  std::vector<char> bytes(archive.size(entry));
  archive.read_into(entry, bytes.data(), bytes.size());
  c10::IValue saved;
  try {
    saved = torch::jit::pickle_load(bytes);
  } catch (const c10::Error& e) {
    throw ModelLoadError("the archive's sample inputs could not be read: " + first_line(e.what_without_backtrace()));
  }
  // (args, kwargs): the positional inputs.
  if (!saved.isTuple() || saved.toTupleRef().elements().empty() || !saved.toTupleRef().elements()[0].isTuple())
    throw ModelLoadError("the archive's sample inputs are not the (args, kwargs) torch.export saves");
  const auto& args = saved.toTupleRef().elements()[0].toTupleRef().elements();
  std::vector<c10::IValue> inputs(args.begin(), args.end());
  const auto& both = saved.toTupleRef().elements();
  if (both.size() < 2 || !both[1].isGenericDict()) return inputs;
  const c10::Dict<c10::IValue, c10::IValue> kwargs = both[1].toGenericDict();
  for (size_t i = inputs.size(); i < names.size(); ++i) {
    auto it = kwargs.find(c10::IValue(names[i]));
    if (it == kwargs.end()) return {};
    inputs.push_back(it->value());
  }
  return inputs;
}

}  // namespace layoutprof
