// The process's spill file: where figures and pages that nothing reads for a while wait on disk
// (page cache) instead of in the process's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace layoutprof {

// An unlinked temporary file that spilled PackedInts live in for the rest of the process, in
// $TMPDIR or else /var/tmp (a disk, where /tmp may be memory). Page cache, not the process's
// memory.
class SpillFile {
 public:
  // The process's one spill file, made on first use; null where none could be made (then
  // nothing spills: the bytes stay in memory, and spill_note() says why).
  static std::shared_ptr<SpillFile> get();
  static const std::string& note();
  ~SpillFile();
  // Appends; returns the offset, or -1 (errno set) when the file could not take them.
  int64_t append(const uint8_t* data, size_t n);
  // Reads up to n bytes at `offset`; returns how many.
  size_t read(int64_t offset, uint8_t* into, size_t n) const;
  // Parks the pages [at, at + bytes) (page-aligned; bytes rounded up to whole pages): appends
  // them to the file and hands the memory behind them back to the kernel (MADV_DONTNEED); the
  // addresses stay mapped, reading zeros, until unpark() puts the bytes back. Returns the
  // offset, or -1 where the file could not take them (then the pages stay as they are).
  int64_t park(void* at, size_t bytes);
  // Puts parked pages back where they were; false where the file could not give them back.
  bool unpark(int64_t offset, void* at, size_t bytes) const;

 private:
  explicit SpillFile(int fd) : fd_(fd) {}
  int fd_;
  int64_t size_ = 0;
};

}  // namespace layoutprof
