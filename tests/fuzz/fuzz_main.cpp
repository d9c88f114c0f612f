// One libFuzzer target: FUZZ_ENTRY names its body in fuzz_entries.h.
#include "fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return layoutprof::fuzz::FUZZ_ENTRY(data, size);
}
