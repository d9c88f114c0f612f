#include "support/atomic_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/errors.h"

namespace layoutprof {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  fs::path dir = fs::temp_directory_path() / ("layoutprof_atomic_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicFile, WritesWholeAndLeavesNoTemporary) {
  fs::path dir = temp_dir();
  fs::path file = dir / "out.json";
  write_file_atomically(file.string(), "{\"a\": 1}\n");
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "{\"a\": 1}\n");
  write_file_atomically(file.string(), "second");
  std::ifstream again(file);
  std::stringstream s2;
  s2 << again.rdbuf();
  EXPECT_EQ(s2.str(), "second");
  size_t entries = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
  EXPECT_EQ(entries, 1u);
  fs::remove_all(dir);
}

TEST(AtomicFile, ErrorNamesTheFileAndTheReason) {
  try {
    write_file_atomically("/nonexistent-dir/out.json", "x");
    FAIL();
  } catch (const OutputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("'/nonexistent-dir/out.json'"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("No such file or directory"));
    EXPECT_EQ(e.code(), kExitOutput);
  }
}

TEST(AtomicFile, FailureKeepsTheOldFile) {
  fs::path dir = temp_dir();
  fs::path target = dir / "report.json";
  fs::create_directories(target);  // rename onto a directory fails
  EXPECT_THROW(write_file_atomically(target.string(), "x"), OutputError);
  EXPECT_TRUE(fs::is_directory(target));
  size_t entries = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
  EXPECT_EQ(entries, 1u) << "temporary file left behind";
  fs::remove_all(dir);
}

TEST(AtomicFile, ManyBlocksStreamedArriveWholeInOrder) {
  // 20 MB in pieces of every size: crosses the 1 MB blocks and the 8 MB write-behind.
  fs::path dir = temp_dir();
  fs::path file = dir / "big.json";
  std::string expected;
  write_file_atomically(file.string(), [&expected](std::ostream& out) {
    for (int i = 0; expected.size() < (20u << 20); ++i) {
      std::string piece(static_cast<size_t>(i % 5000), static_cast<char>('a' + i % 26));
      out << piece << i << '\n';
      expected += piece + std::to_string(i) + '\n';
    }
  });
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str().size(), expected.size());
  EXPECT_TRUE(s.str() == expected);
  fs::remove_all(dir);
}

TEST(AtomicFile, AWriterThatThrowsLeavesNeitherTheFileNorATemporary) {
  fs::path dir = temp_dir();
  fs::path file = dir / "report.json";
  EXPECT_THROW(write_file_atomically(file.string(),
                                     [](std::ostream& out) {
                                       out << std::string(3 << 20, 'x');
                                       throw std::runtime_error("writer failed");
                                     }),
               std::runtime_error);
  EXPECT_FALSE(fs::exists(file));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace layoutprof
