// Arithmetic that a hostile report cannot overflow: strides made from its sizes.
#pragma once

#include <cstdint>

namespace layoutprof {

// a * b, held at INT64_MAX past its range.
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? INT64_MAX : product;
}

// a + b, held at INT64_MAX past its range (both non-negative).
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

}  // namespace layoutprof
