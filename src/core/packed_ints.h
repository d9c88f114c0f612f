// Integers kept as zigzag varints and read back in order: the durations of a call's small
// ops take 2 or 3 bytes each instead of 8, so a recorded call after the first adds a few
// bytes per op event; and spilled, not even those: the bytes move to a temporary file and are
// read back, in order, through a small buffer.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/mapped_allocator.h"
#include "support/spill_file.h"

namespace layoutprof {

struct CounterValue;

class PackedInts {
 public:
  void push_back(int64_t v) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      bytes_.push_back(static_cast<uint8_t>(z | 0x80));
      z >>= 7;
    }
    bytes_.push_back(static_cast<uint8_t>(z));
    ++size_;
  }
  // A counter reading as three values: raw, whether it was multiplexed, and its scaled value
  // (as the bits of the double) only where that is not the raw count itself.
  void push_counter(const CounterValue& v);
  size_t size() const { return size_; }  // integers pushed
  size_t counters() const { return counters_; }  // of which push_counter's readings
  bool empty() const { return size_ == 0; }
  void shrink_to_fit() { bytes_.shrink_to_fit(); }
  bool spilled() const { return file_ != nullptr; }
  // Moves the bytes to SpillFile::get() (they stay here where there is none). Once spilled,
  // nothing more is pushed.
  void spill();

  // Reads the values in order; reading past the end gives 0.
  class Reader {
   public:
    explicit Reader(const PackedInts& p);
    int64_t next() {
      uint64_t z = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (at_ == end_ && !refill()) break;
        const uint8_t b = *at_++;
        z |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
      }
      return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
    }
    CounterValue next_counter();

   private:
    bool refill();  // from the spill file; false at the end
    const uint8_t* at_ = nullptr;
    const uint8_t* end_ = nullptr;
    std::shared_ptr<SpillFile> file_;
    int64_t offset_ = 0, left_ = 0;  // in the file: where the next refill reads, and what remains
    std::unique_ptr<uint8_t[]> buffer_;
  };
  Reader reader() const { return Reader(*this); }

 private:
  // Mapped (mapped_allocator.h): a call's figures are megabytes on a million-op call, and
  // each call's go to the spill file as the next is made; from the heap, glibc's moving mmap
  // threshold left them behind as fragments, 2.4 MB a call on op_loop at 1M op events.
  MappedVector<uint8_t> bytes_;
  size_t size_ = 0;
  size_t counters_ = 0;
  std::shared_ptr<SpillFile> file_;  // set when spilled: the bytes are at offset_, length_
  int64_t offset_ = 0, length_ = 0;
};

}  // namespace layoutprof
