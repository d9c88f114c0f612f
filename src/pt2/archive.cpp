#include "pt2/archive.h"

#include <zip.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "support/errors.h"

namespace layoutprof::pt2 {
namespace {

const std::string kModelJson = "models/model.json";
// Deflate inflates at most about 1032 to 1; other methods are refused when read.
constexpr uint64_t kMaxInflation = 1100;

// "<x>/" when `entry` is "<x>/<tail>" with one folder <x>, else "".
std::string folder_of(const std::string& entry, const std::string& tail) {
  if (entry.size() <= tail.size() + 1 || entry.compare(entry.size() - tail.size(), tail.size(), tail) != 0) return "";
  std::string folder = entry.substr(0, entry.size() - tail.size());
  if (folder.back() != '/' || folder.find('/') != folder.size() - 1) return "";
  return folder;
}

std::string zip_problem(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

struct FileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using ZipFile = std::unique_ptr<zip_file_t, FileCloser>;

}  // namespace

Archive::Archive(const std::string& path) : name_(path) {
  int code = 0;
  zip_.reset(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!zip_) throw ModelLoadError(bounded(path, 200) + ": not a readable zip archive (" + zip_problem(code) + ")");
  std::error_code error;
  archive_bytes_ = std::filesystem::file_size(path, error);
  if (error) throw ModelLoadError(bounded(path, 200) + ": its size is unknown (" + error.message() + ")");
  find_prefix();
}

Archive Archive::from_bytes(std::string bytes, const std::string& name) {
  Archive a;
  a.name_ = name;
  a.bytes_ = std::make_shared<const std::string>(std::move(bytes));
  a.archive_bytes_ = a.bytes_->size();
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(a.bytes_->data(), a.bytes_->size(), 0, &error);
  if (source) a.zip_.reset(zip_open_from_source(source, ZIP_RDONLY, &error));
  std::string problem = zip_error_strerror(&error);
  zip_error_fini(&error);
  if (!a.zip_) {
    if (source) zip_source_free(source);  // only an opened archive owns its source
    throw ModelLoadError(bounded(name, 200) + ": not a readable zip archive (" + problem + ")");
  }
  a.find_prefix();
  return a;
}

void Archive::Discard::operator()(zip* z) const { zip_discard(z); }  // read-only: nothing to write back

// The one folder with models/model.json: an archive of several programs (or none) is refused,
// since nothing would say which one to run.
void Archive::find_prefix() {
  const zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* entry = zip_get_name(zip_.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (!entry) continue;
    std::string folder = folder_of(entry, kModelJson);
    if (folder.empty() || folder == prefix_) continue;
    if (!prefix_.empty())
      fail(kModelJson, "found in two folders, " + bounded(prefix_) + " and " + bounded(folder) + ": one program per archive");
    prefix_ = folder;
  }
  if (prefix_.empty()) fail("<folder>/" + kModelJson, "missing: not a torch.export archive (.pt2)");
}

void Archive::fail(const std::string& entry, const std::string& problem) const {
  throw ModelLoadError(bounded(name_, 200) + ": " + bounded(entry, 200) + ": " + problem);
}

bool Archive::has(const std::string& entry) const { return zip_name_locate(zip_.get(), entry.c_str(), ZIP_FL_ENC_RAW) >= 0; }

// The size the directory records, refused where the data could not hold it: a caller sizes
// its buffer by it (a weight's storage) before reading, so a directory that lies about an entry
// must not make it allocate more than the archive's bytes can inflate to.
uint64_t Archive::size(const std::string& entry) const {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(zip_.get(), entry.c_str(), ZIP_FL_ENC_RAW, &st) != 0) fail(entry, "missing from the archive");
  const zip_uint64_t needed = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((st.valid & needed) != needed) fail(entry, "its sizes are not recorded");
  if (st.comp_size > archive_bytes_) fail(entry, "its data is larger than the archive");
  const bool stored = st.comp_method == ZIP_CM_STORE;
  if (stored ? st.size != st.comp_size : st.size / kMaxInflation > st.comp_size)
    fail(entry, std::to_string(st.size) + " bytes from " + std::to_string(st.comp_size) + " in the archive: its directory is wrong");
  return st.size;
}

std::string Archive::read_text(const std::string& entry, uint64_t most) const {
  const uint64_t n = size(entry);
  if (n > most) fail(entry, std::to_string(n) + " bytes, over the " + std::to_string(most) + " this reader accepts");
  std::string text(n, '\0');
  read_into(entry, text.data(), n);
  return text;
}

// Streams in pieces: libzip inflates (or copies) into `dst` directly, checking the CRC once the
// whole entry has been read.
void Archive::read_into(const std::string& entry, void* dst, uint64_t bytes) const {
  const uint64_t n = size(entry);
  if (n < bytes) fail(entry, std::to_string(n) + " bytes, shorter than the " + std::to_string(bytes) + " its metadata needs");
  ZipFile file(zip_fopen(zip_.get(), entry.c_str(), ZIP_FL_ENC_RAW));
  if (!file) fail(entry, std::string("cannot be opened (") + zip_error_strerror(zip_get_error(zip_.get())) + ")");
  auto* out = static_cast<char*>(dst);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t piece = std::min<uint64_t>(bytes - done, uint64_t{1} << 30);
    const zip_int64_t got = zip_fread(file.get(), out + done, piece);
    if (got < 0) fail(entry, std::string("unreadable (") + zip_error_strerror(zip_file_get_error(file.get())) + ")");
    if (got == 0) fail(entry, "ends after " + std::to_string(done) + " of its " + std::to_string(bytes) + " bytes");
    done += static_cast<uint64_t>(got);
  }
  if (bytes == n) {  // read to the end: the CRC is checked, and nothing may follow
    char extra;
    const zip_int64_t got = zip_fread(file.get(), &extra, 1);
    if (got < 0) fail(entry, std::string("unreadable (") + zip_error_strerror(zip_file_get_error(file.get())) + ")");
    if (got > 0) fail(entry, "longer than the " + std::to_string(n) + " bytes the archive's directory says");
  }
}

bool is_pt2_archive(const std::string& path) {
  try {
    int code = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &code);
    if (!z) return false;
    std::unique_ptr<zip_t, void (*)(zip_t*)> closer(z, zip_discard);
    const zip_int64_t n = zip_get_num_entries(z, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* entry = zip_get_name(z, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
      if (!entry) continue;
      if (!folder_of(entry, kModelJson).empty()) return true;
      if (folder_of(entry, "archive_format").empty()) continue;
      ZipFile f(zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0));
      char text[4] = {};
      if (f && zip_fread(f.get(), text, 4) == 3 && std::string(text, 3) == "pt2") return true;
    }
  } catch (...) {  // an allocation failing: not something this question should throw
  }
  return false;
}

}  // namespace layoutprof::pt2
