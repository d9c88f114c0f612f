#include "support/spill_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace layoutprof {

namespace {
std::string& spill_note_text() {
  static std::string note;
  return note;
}
}  // namespace

std::shared_ptr<SpillFile> SpillFile::get() {
  static std::once_flag once;
  static std::shared_ptr<SpillFile> file;
  std::call_once(once, [] {
    const char* env = std::getenv("TMPDIR");
    std::string dir = env && *env ? env : "/var/tmp";
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      spill_note_text() = "later calls' figures kept in memory: no temporary file in " + dir + " (" +
                          std::strerror(errno) + ")";
      return;
    }
    file.reset(new SpillFile(fd));
    spill_note_text() = "later calls' figures spilled to an unlinked temporary file in " + dir;
  });
  return file;
}

const std::string& SpillFile::note() {
  get();
  return spill_note_text();
}

SpillFile::~SpillFile() { ::close(fd_); }

int64_t SpillFile::append(const uint8_t* data, size_t n) {
  const int64_t at = size_;
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::pwrite(fd_, data + done, n - done, at + static_cast<int64_t>(done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    done += static_cast<size_t>(w);
  }
  size_ += static_cast<int64_t>(n);
  return at;
}

size_t SpillFile::read(int64_t offset, uint8_t* into, size_t n) const {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, into + done, n - done, offset + static_cast<int64_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

namespace {
size_t whole_pages(size_t bytes) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}
}  // namespace

int64_t SpillFile::park(void* at, size_t bytes) {
  bytes = whole_pages(bytes);
  const int64_t offset = append(static_cast<const uint8_t*>(at), bytes);
  if (offset < 0) return -1;
  ::madvise(at, bytes, MADV_DONTNEED);  // advice: where the kernel keeps them, nothing is lost
  return offset;
}

bool SpillFile::unpark(int64_t offset, void* at, size_t bytes) const {
  bytes = whole_pages(bytes);
  return read(offset, static_cast<uint8_t*>(at), bytes) == bytes;
}

}  // namespace layoutprof
