#include <csignal>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <shardflow/core/leftovers.hpp>

namespace fs = std::filesystem;
using namespace shardflow;

TEST_CASE("leftovers: what a signal's end at once removes and kills, and what it leaves", "[core]") {
  const fs::path root = fs::temp_directory_path() / ("shardflow-leftovers-" + std::to_string(::getpid()));
  fs::remove_all(root);
  // Made outermost first, as make_out_dir registers them: a/b/c, with a temporary file in c.
  fs::create_directories(root / "a" / "b" / "c");
  const int a = leftovers::add_directory((root / "a").c_str());
  const int b = leftovers::add_directory((root / "a" / "b").c_str());
  const int c = leftovers::add_directory((root / "a" / "b" / "c").c_str());
  const fs::path tmp = root / "a" / "b" / "c" / ".trace.json.tmp-1";
  std::ofstream(tmp) << "half";
  const int t = leftovers::add_file(tmp.c_str());
  // A file registered and then forgotten (renamed into place) stays.
  const fs::path kept = root / "a" / "kept.txt";
  std::ofstream(kept) << "result";
  leftovers::remove_file(leftovers::add_file(kept.c_str()));
  // A command's process group: its leader (and what it started) killed.
  pid_t pid = 0;
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  char sh[] = "sleep", arg[] = "30";
  char* argv[] = {sh, arg, nullptr};
  REQUIRE(posix_spawnp(&pid, "sleep", nullptr, &attr, argv, environ) == 0);
  posix_spawnattr_destroy(&attr);
  // A scratch directory of files (a --no-files run's command logs): removed with them.
  const fs::path scratch = root / "scratch";
  fs::create_directories(scratch);
  for (int i = 0; i < 300; ++i)  // more than one getdents64 buffer of names
    std::ofstream(scratch / ("work[" + std::to_string(i) + "].attempt0.stdout")) << i;
  const int sc = leftovers::add_scratch_directory(scratch.c_str());
  REQUIRE(sc >= 0);
  const int g = leftovers::add_group(pid);
  REQUIRE(g >= 0);
  REQUIRE(a >= 0);
  REQUIRE(t >= 0);

  leftovers::clean_up_at_once();

  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK_FALSE(fs::exists(tmp));
  CHECK_FALSE(fs::exists(scratch));
  CHECK_FALSE(fs::exists(root / "a" / "b"));  // c, then b, emptied and removed
  CHECK(fs::exists(kept));                    // a holds a result: it stays, and the result in it
  CHECK(fs::exists(root / "a"));
  for (const int slot : {a, b, c, t, sc}) leftovers::remove_file(slot);
  leftovers::remove_group(g);
  // Forgotten: nothing more is touched.
  leftovers::clean_up_at_once();
  CHECK(fs::exists(kept));
  // A path too long for a slot is not registered (-1), and -1 is forgotten harmlessly.
  CHECK(leftovers::add_file(std::string(5000, 'x').c_str()) == -1);
  leftovers::remove_file(-1);
  leftovers::remove_group(-1);
  CHECK(leftovers::add_group(0) == -1);
  fs::remove_all(root);
}
