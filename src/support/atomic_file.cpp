#include "support/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <vector>

#include "support/errors.h"
#include "support/interrupt.h"

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

// Writes straight to a file descriptor in blocks of 1 MB and starts the kernel's writeback of
// each 8 MB as soon as it is written (sync_file_range), so that the fsync before the rename
// waits for the last blocks only instead of the whole file: disk and writer overlap.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buffer_(1 << 20) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const char* p = pbase();
    while (p < pptr() && error_ == 0) {
      ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) error_ = n < 0 ? errno : EIO;
      else p += n, written_ += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    constexpr off_t kWriteBehind = 8 << 20;
    if (error_ == 0 && written_ - kicked_ >= kWriteBehind) {
      ::sync_file_range(fd_, kicked_, written_ - kicked_, SYNC_FILE_RANGE_WRITE);  // a hint: errors show at fsync
      kicked_ = written_;
    }
    return error_ == 0;
  }
  int fd_;
  std::vector<char> buffer_;
  off_t written_ = 0, kicked_ = 0;
  int error_ = 0;
};

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&content](std::ostream& out) { out << content; });
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    write(std::cout);
    std::cout << std::flush;
    if (!std::cout) throw OutputError("cannot write to standard output");
    return;
  }
  std::string tmp = path + ".tmp.XXXXXX";
  std::vector<char> name(tmp.begin(), tmp.end());
  name.push_back('\0');
  Fd fd(::mkstemp(name.data()));
  if (fd.get() < 0) fail("create a temporary file for", path, errno);
  tmp.assign(name.data());
  // A second Ctrl-C removes it (interrupt.h); cleared on every way out of here.
  set_pending_output(tmp.c_str());
  struct Clear {
    ~Clear() { set_pending_output(nullptr); }
  } clear;
  auto failed = [&](int err) {
    ::unlink(tmp.c_str());
    fail("write", path, err);
  };
  {
    FdBuf buf(fd.get());
    std::ostream out(&buf);
    try {
      write(out);
    } catch (...) {
      ::unlink(tmp.c_str());  // nothing half-written is left beside the target
      throw;
    }
    out.flush();
    if (!out || buf.error() != 0) failed(buf.error() ? buf.error() : EIO);
  }
  ::fchmod(fd.get(), 0644);
  if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) failed(errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) failed(errno);
}

}  // namespace layoutprof
