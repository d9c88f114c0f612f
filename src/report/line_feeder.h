// Reading a report fast and in bounded memory. nlohmann's SAX parser reads the document one
// character at a time from a LineFeeder; where the parser's handler says that an array of
// entries opens (the op rows, the tensor table, the copies, the split points) and the file has
// them one per line, as layoutprof writes them, the feeder passes those lines by the parser:
// each is parsed on its own by simdjson and handed to a converter, and the parser sees an
// empty array. A line that is not one whole entry (a report a JSON tool re-indented, entries
// sharing a line) ends that: the rest of the array goes through the parser as before. Either
// way every byte is parsed by one of the two libraries, and memory holds one block of the file.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace layoutprof {

// The document is not JSON, as seen where the feeder passes lines by (a trailing comma).
struct JsonSyntaxError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class LineFeeder {
 public:
  using Entry = std::function<void(simdjson::dom::element)>;

  static constexpr size_t kBlock = size_t{1} << 20;

  // Reads `fd` (not owned) in blocks of `block` bytes; a line longer than that is never one
  // whole entry, nor is one that nests more than `max_entry_depth` arrays and objects (the
  // entry's own included): it goes to the parser. (Some at that depth go to the parser too.)
  explicit LineFeeder(int fd, size_t block = kBlock, size_t max_entry_depth = simdjson::DEFAULT_MAX_DEPTH);
  LineFeeder(const LineFeeder&) = delete;
  LineFeeder& operator=(const LineFeeder&) = delete;

  // nlohmann's input: the document's characters, those of the lines passed by excluded.
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;
    iterator() = default;  // the end
    explicit iterator(LineFeeder* f) : f_(f) {}
    const char& operator*() const { return f_->buf_[f_->pos_]; }
    iterator& operator++() {
      f_->advance();
      return *this;
    }
    bool operator==(const iterator& o) const { return at_end() == o.at_end(); }
    bool operator!=(const iterator& o) const { return !(*this == o); }

   private:
    bool at_end() const { return f_ == nullptr || f_->at_eof(); }
    LineFeeder* f_ = nullptr;
  };
  iterator begin() { return iterator(this); }
  iterator end() { return iterator(); }

  // Called by the parser's handler at an array's '[' (the last character read): if the rest of
  // that line is blank, the lines that follow go to `entry` while each is one whole entry.
  void arm(Entry entry);
  void disarm() { entry_ = nullptr; }
  // Entries converted so far, by either path's caller; for tests and the bench.
  size_t fast_entries() const { return fast_entries_; }
  // Bytes of the file read so far.
  size_t offset() const { return consumed_ + pos_; }

 private:
  bool at_eof() {
    return pos_ >= end_ && !fill();
  }
  void advance() {
    const char c = buf_[pos_++];
    if (c == '\n' && entry_) pass_lines();
  }
  bool fill();  // keeps [pos_, end_), reads more after it; false when nothing more came
  // The line at `from` (an index into buf_): [from, *line_end), with the newline (or the end
  // of the file) at *line_end. False when it does not fit the block.
  bool line_at(size_t& from, size_t* line_end);
  void pass_lines();
  bool next_nonblank_starts_with_bracket(size_t from);

  int fd_;
  std::vector<char> buf_;  // the block, then simdjson's padding
  size_t cap_;
  size_t pos_ = 0, end_ = 0;
  size_t consumed_ = 0;  // bytes before buf_[0]
  bool eof_ = false;
  Entry entry_;
  simdjson::dom::parser parser_;
  size_t fast_entries_ = 0;
};

}  // namespace layoutprof
