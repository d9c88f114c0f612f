// A .pt2 file as a zip archive (libzip): the one exported program it holds (its folder and
// name), the AOTInductor code packaged beside it, and its entries read as bounded text or
// streamed straight into a caller's buffer (a weight into its tensor's storage, with no second
// copy). Every refusal is a ModelLoadError of one line naming the entry. Not thread-safe:
// reading moves libzip's state even through a const Archive.
//
// torch.export.save writes <folder>/models/model.json; package_pt2 may name a program otherwise
// (models/<name>.json) or hold several; aoti_compile_and_package writes compiled code under
// data/aotinductor/<model>/ and no program. All of them say archive_format "pt2".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct zip;

namespace layoutprof::pt2 {

class Archive {
 public:
  // Opens the file at `path`.
  explicit Archive(const std::string& path);
  // Reads a copy of `bytes` held in memory (tests, fuzzing); `name` stands for the file in errors.
  static Archive from_bytes(std::string bytes, const std::string& name = "<memory>");

  Archive(Archive&&) noexcept = default;
  Archive& operator=(Archive&&) noexcept = default;
  ~Archive() = default;

  // "<folder>/": the folder holding models/<program>.json, as every entry below is named.
  const std::string& prefix() const { return prefix_; }
  // The program's name, <program> of models/<program>.json ("model" from torch.export.save):
  // its weights', constants' and sample inputs' entries are named after it.
  const std::string& program() const { return program_; }
  // The <model> folders of data/aotinductor/ beside the program, sorted: compiled code that
  // layoutprof does not run.
  const std::vector<std::string>& aotinductor_models() const { return aotinductor_models_; }
  const std::string& name() const { return name_; }
  bool has(const std::string& entry) const;
  // The entry's length, refused where the archive's bytes could not hold it.
  uint64_t size(const std::string& entry) const;
  // The whole entry as text; refused when its size is over `most`.
  std::string read_text(const std::string& entry, uint64_t most) const;
  // Exactly `bytes` from the entry's start into `dst`; refused when the entry is shorter.
  void read_into(const std::string& entry, void* dst, uint64_t bytes) const;

 private:
  Archive() = default;
  void find_program();
  [[noreturn]] void fail(const std::string& entry, const std::string& problem) const;

  std::string name_, prefix_, program_;
  std::vector<std::string> aotinductor_models_;
  std::shared_ptr<const std::string> bytes_;  // what an in-memory archive reads; stays put on a move
  uint64_t archive_bytes_ = 0;                 // the file's (or the bytes') length
  struct Discard {
    void operator()(zip* z) const;
  };
  std::unique_ptr<zip, Discard> zip_;
};

// Whether `path` is a zip torch.export or AOTInductor wrote (`<x>/models/<name>.json`, or
// `<x>/archive_format` reading "pt2"): only the central directory is read. Never throws. An
// AOTInductor package is one too, so that loading it says what it is.
bool is_pt2_archive(const std::string& path);

}  // namespace layoutprof::pt2
