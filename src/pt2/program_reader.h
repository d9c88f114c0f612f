// Reads a torch.export archive's program (program.h) without LibTorch: models/<name>.json (schema
// 8.x), the weights' and constants' configs named after it, and where its sample inputs are. Checks what the
// executor must be able to trust: every name defined before use, every stored tensor's entry
// present and long enough for its sizes, strides and offset. Anything else is a ModelLoadError
// of one line; no read allocates more than the archive's own entries hold.
#pragma once

#include <cstdint>
#include <string>

#include "pt2/archive.h"
#include "pt2/program.h"

namespace layoutprof::pt2 {

// The schema major this reader knows: what PyTorch 2.9 to 2.14 write (schema.py's SCHEMA_VERSION).
constexpr int kSchemaMajor = 8;

Program read_program(const Archive& archive);

// The bytes a stored tensor's storage spans (what the executor allocates for a weight): refused,
// `at` naming it, where a size, stride or the offset is symbolic or negative, the dtype unknown,
// the layout not strided, or the count past 2^63.
uint64_t storage_bytes(const TensorMeta& meta, const std::string& at);

// Bytes per element of a schema ScalarType code (torch/_export/serde/schema.py), 0 when unknown.
int dtype_element_size(int schema_dtype);

}  // namespace layoutprof::pt2
