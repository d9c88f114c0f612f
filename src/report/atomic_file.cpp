#include "layoutprof/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "layoutprof/errors.h"

namespace layoutprof {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw OutputError("cannot " + what + " '" + path + "': " + std::strerror(err));
}

// Owns a file descriptor; closes it unless released.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::cout << content << std::flush;
    if (!std::cout) throw OutputError("cannot write to standard output");
    return;
  }
  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  Fd fd(::mkstemp(name.data()));
  if (fd.get() < 0) fail("create a temporary file for", path, errno);
  tmp.assign(name.data());
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      fail("write", path, err);
    }
    done += static_cast<size_t>(n);
  }
  ::fchmod(fd.get(), 0644);
  if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("write", path, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("write", path, err);
  }
}

}  // namespace layoutprof
