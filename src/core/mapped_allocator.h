// An allocator for the few large arrays layoutprof holds (raw events, tensors, op events):
// blocks of 256 KB and more are mapped from the kernel directly (mmap) and handed back whole
// (munmap), smaller ones come from operator new. glibc's malloc raises its mmap threshold each
// time it frees a mapped block (up to 32 MB), after which blocks that size, the model's own
// activations among them, come from the heap, whose peak then depends on where everything
// else landed: going around malloc for its largest blocks, layoutprof changes neither the
// model's allocations nor its own peak by freeing them.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <vector>

namespace layoutprof {

template <typename T>
struct MappedAllocator {
  using value_type = T;
  static constexpr size_t kMapFrom = size_t{256} << 10;

  MappedAllocator() = default;
  template <typename U>
  MappedAllocator(const MappedAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMapFrom) return static_cast<T*>(::operator new(bytes));
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMapFrom) ::operator delete(p);
    else ::munmap(p, bytes);
  }
  template <typename U>
  bool operator==(const MappedAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const MappedAllocator<U>&) const { return false; }
};

template <typename T>
using MappedVector = std::vector<T, MappedAllocator<T>>;

}  // namespace layoutprof
