#include "core/packed_ints.h"

#include "core/trace.h"

namespace layoutprof {

namespace {
constexpr size_t kReadBuffer = 64 * 1024;
}  // namespace

void PackedInts::push_counter(const CounterValue& v) {
  ++counters_;
  push_back(static_cast<int64_t>(v.raw));
  const bool exact = v.scaled == static_cast<double>(v.raw);
  push_back((v.multiplexed ? 1 : 0) | (exact ? 0 : 2));
  if (!exact) {
    int64_t bits = 0;
    std::memcpy(&bits, &v.scaled, sizeof bits);
    push_back(bits);
  }
}

void PackedInts::spill() {
  if (file_ || bytes_.empty()) return;
  std::shared_ptr<SpillFile> file = SpillFile::get();
  if (!file) return;
  const int64_t at = file->append(bytes_.data(), bytes_.size());
  if (at < 0) return;  // the disk is full: the bytes stay here, nothing is lost
  file_ = std::move(file);
  offset_ = at;
  length_ = static_cast<int64_t>(bytes_.size());
  MappedVector<uint8_t>().swap(bytes_);
}

PackedInts::Reader::Reader(const PackedInts& p) {
  if (!p.file_) {
    at_ = p.bytes_.data();
    end_ = at_ + p.bytes_.size();
    return;
  }
  file_ = p.file_;
  offset_ = p.offset_;
  left_ = p.length_;
  buffer_.reset(new uint8_t[kReadBuffer]);
  at_ = end_ = buffer_.get();
}

bool PackedInts::Reader::refill() {
  if (!file_ || left_ <= 0) return false;
  const size_t want = static_cast<size_t>(std::min<int64_t>(left_, static_cast<int64_t>(kReadBuffer)));
  const size_t got = file_->read(offset_, buffer_.get(), want);
  if (got == 0) return false;
  offset_ += static_cast<int64_t>(got);
  left_ -= static_cast<int64_t>(got);
  at_ = buffer_.get();
  end_ = at_ + got;
  return true;
}

CounterValue PackedInts::Reader::next_counter() {
  CounterValue v;
  v.raw = static_cast<uint64_t>(next());
  const int64_t flags = next();
  v.multiplexed = flags & 1;
  v.scaled = static_cast<double>(v.raw);
  if (flags & 2) {
    const int64_t bits = next();
    std::memcpy(&v.scaled, &bits, sizeof bits);
  }
  return v;
}

}  // namespace layoutprof
