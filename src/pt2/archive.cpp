#include "pt2/archive.h"

#include <zip.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "support/errors.h"

namespace layoutprof::pt2 {
namespace {

// Deflate inflates at most about 1032 to 1; other methods are refused when read.
constexpr uint64_t kMaxInflation = 1100;
// The names a refusal lists before "and N more".
constexpr size_t kNamesListed = 4;

// An entry "<folder>/<rest>" with one folder level, split after its first '/'.
bool split_entry(const std::string& entry, std::string& folder, std::string& rest) {
  const size_t slash = entry.find('/');
  if (slash == 0 || slash == std::string::npos || slash + 1 == entry.size()) return false;
  folder = entry.substr(0, slash + 1);
  rest = entry.substr(slash + 1);
  return true;
}

// <name> of "models/<name>.json" (the program torch.export.save names "model"), else "".
std::string program_of(const std::string& rest) {
  const std::string head = "models/", tail = ".json";
  if (rest.size() <= head.size() + tail.size() || rest.compare(0, head.size(), head) != 0 ||
      rest.compare(rest.size() - tail.size(), tail.size(), tail) != 0)
    return "";
  std::string name = rest.substr(head.size(), rest.size() - head.size() - tail.size());
  return name.find('/') == std::string::npos ? name : "";
}

// <model> of "data/aotinductor/<model>/<file>" (AOTInductor's compiled code), else "".
std::string aotinductor_model_of(const std::string& rest) {
  const std::string head = "data/aotinductor/";
  if (rest.size() <= head.size() || rest.compare(0, head.size(), head) != 0) return "";
  const size_t slash = rest.find('/', head.size());
  if (slash == std::string::npos || slash == head.size()) return "";
  return rest.substr(head.size(), slash - head.size());
}

// What the central directory lists, by "<folder>/": programs and AOTInductor models.
struct Contents {
  std::map<std::string, std::set<std::string>> programs, aotinductor;
};

Contents list_contents(zip_t* z) {
  Contents c;
  std::string folder, rest;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* entry = zip_get_name(z, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (!entry || !split_entry(entry, folder, rest)) continue;
    if (std::string program = program_of(rest); !program.empty()) c.programs[folder].insert(program);
    else if (std::string model = aotinductor_model_of(rest); !model.empty()) c.aotinductor[folder].insert(model);
  }
  return c;
}

// "head<a>tail, head<b>tail and 3 more", each name bounded.
std::string listed(const std::set<std::string>& names, const std::string& head = "", const std::string& tail = "") {
  std::string text;
  size_t shown = 0;
  for (const std::string& name : names) {
    if (shown == kNamesListed) return text + " and " + std::to_string(names.size() - shown) + " more";
    text += (shown++ ? ", " : "") + head + bounded(name, 60) + tail;
  }
  return text;
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
  find_program();
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
  a.find_program();
  return a;
}

void Archive::Discard::operator()(zip* z) const { zip_discard(z); }  // read-only: nothing to write back

// The one folder with models/<name>.json, and the one program there: an archive of several
// programs is refused, since nothing would say which one to run; one of AOTInductor's compiled
// code alone is refused by what it is, with what to profile instead.
void Archive::find_program() {
  const Contents c = list_contents(zip_.get());
  if (c.programs.size() > 1)
    fail("models/<name>.json", "found in two folders, " + bounded(c.programs.begin()->first) + " and " +
                                   bounded(std::next(c.programs.begin())->first) + ": one program per archive");
  if (c.programs.empty() && !c.aotinductor.empty())
    throw ModelLoadError(bounded(name_, 200) + ": an AOTInductor package (compiled code for " +
                         listed(c.aotinductor.begin()->second) + ", no exported program): layoutprof profiles the "
                         "exported program it was compiled from: save it with torch.export.save(ep, 'model.pt2') "
                         "and profile that");
  if (c.programs.empty()) fail("<folder>/models/<name>.json", "missing: not a torch.export archive (.pt2)");
  prefix_ = c.programs.begin()->first;
  const std::set<std::string>& programs = c.programs.begin()->second;
  if (programs.size() > 1)
    throw ModelLoadError(bounded(name_, 200) + ": " + std::to_string(programs.size()) + " exported programs (" +
                         listed(programs, "models/", ".json") + "): layoutprof profiles one program per archive: "
                         "save the one to profile with torch.export.save(ep, 'model.pt2')");
  program_ = *programs.begin();
  if (const auto code = c.aotinductor.find(prefix_); code != c.aotinductor.end())
    aotinductor_models_.assign(code->second.begin(), code->second.end());
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
    std::string folder, rest;
    const zip_int64_t n = zip_get_num_entries(z, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* entry = zip_get_name(z, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
      if (!entry || !split_entry(entry, folder, rest)) continue;
      if (!program_of(rest).empty()) return true;
      if (rest != "archive_format") continue;
      ZipFile f(zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0));
      char text[4] = {};
      if (f && zip_fread(f.get(), text, 4) == 3 && std::string(text, 3) == "pt2") return true;
    }
  } catch (...) {  // an allocation failing: not something this question should throw
  }
  return false;
}

}  // namespace layoutprof::pt2
