// A vector in one pointer. An op event's lists (its counters, its GPU kernels) are empty for
// most op events of a large model; a std::vector costs 24 bytes even empty, this 8, and its
// elements sit behind the pointer with their count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace layoutprof {

template <typename T>
class CompactVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "elements are moved as bytes");

 public:
  CompactVector() = default;
  CompactVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit, like a copy
  CompactVector(std::initializer_list<T> v) { assign(v.begin(), v.end()); }
  CompactVector(const CompactVector& o) { assign(o.begin(), o.end()); }
  CompactVector(CompactVector&& o) noexcept : block_(o.block_) { o.block_ = nullptr; }
  CompactVector& operator=(const CompactVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  CompactVector& operator=(CompactVector&& o) noexcept {
    std::swap(block_, o.block_);
    return *this;
  }
  CompactVector& operator=(std::initializer_list<T> v) {
    assign(v.begin(), v.end());
    return *this;
  }
  ~CompactVector() { ::operator delete(block_); }

  size_t size() const { return block_ ? block_->size : 0; }
  bool empty() const { return size() == 0; }
  T* data() { return block_ ? block_->data() : nullptr; }
  const T* data() const { return block_ ? block_->data() : nullptr; }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size() - 1]; }
  const T& back() const { return data()[size() - 1]; }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

  void clear() {
    if (block_) block_->size = 0;
  }
  void reserve(size_t n) {
    if (n > capacity()) grow_to(n);
  }
  void push_back(const T& v) {
    if (size() == capacity()) {
      const T copy = v;  // v may live in this vector
      grow_to(std::max<size_t>(4, 2 * capacity()));
      block_->data()[block_->size++] = copy;
      return;
    }
    block_->data()[block_->size++] = v;
  }
  // New elements are value-initialised.
  void resize(size_t n) {
    reserve(n);
    if (n == 0 && !block_) return;
    for (size_t i = size(); i < n; ++i) new (block_->data() + i) T();
    block_->size = static_cast<uint32_t>(n);
  }
  template <typename It>
  void assign(It first, It last) {
    const size_t n = static_cast<size_t>(std::distance(first, last));
    clear();
    reserve(n);
    for (; first != last; ++first) block_->data()[block_->size++] = *first;
  }

  friend bool operator==(const CompactVector& a, const CompactVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const CompactVector& a, const CompactVector& b) { return !(a == b); }

 private:
  struct Block {
    uint32_t size;
    uint32_t capacity;
    T* data() { return reinterpret_cast<T*>(reinterpret_cast<char*>(this) + kDataOffset); }
  };
  static constexpr size_t kDataOffset = (sizeof(Block) + alignof(T) - 1) / alignof(T) * alignof(T);
  static_assert(alignof(T) <= alignof(std::max_align_t), "operator new aligns to max_align_t");

  size_t capacity() const { return block_ ? block_->capacity : 0; }
  void grow_to(size_t n) {
    if (n > UINT32_MAX) throw std::length_error("CompactVector: more than 2^32 elements");
    auto* grown = static_cast<Block*>(::operator new(kDataOffset + n * sizeof(T)));
    grown->size = static_cast<uint32_t>(size());
    grown->capacity = static_cast<uint32_t>(n);
    if (block_) std::memcpy(static_cast<void*>(grown->data()), block_->data(), size() * sizeof(T));
    ::operator delete(block_);
    block_ = grown;
  }

  Block* block_ = nullptr;
};

}  // namespace layoutprof
