#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/file.h>
#include <system_error>
#include <unistd.h>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/leftovers.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>
#include <shardflow/exec/kernels.hpp>

#include "commands.hpp"

namespace shardflow::cli {

std::filesystem::path out_dir_path(const std::string& out_dir, const std::string& scenario_name,
                                   const std::string& sub) {
  if (!out_dir.empty()) return out_dir;
  // The scenario's name as one directory under out/: a name is the user's text ("../x", "/tmp/x", a NUL,
  // 5,000 characters), not a path, so anything but ASCII letters and digits, '.', '-', '_' and whole
  // non-ASCII UTF-8 characters (a name in Chinese keeps its own directory) becomes '_', and so do the
  // dots it starts with (no hidden directory, no ".."). A name changed so (or cut at 100 bytes) gets a
  // hash of the whole name after a '-', so that two names that read the same here ("team/a", "team_a")
  // do not share a directory and overwrite each other's results.
  const std::string name = scenario_name.substr(0, 100);
  std::string dir;
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    // A non-ASCII character, but not a C1 control (U+0080 to U+009F, which a terminal may obey) nor one
    // that prints as nothing or as a space (a zero-width or no-break space, a line separator, a direction
    // override: a directory `a<U+200B>b` reads as `ab`).
    const std::size_t n = c >= 0x80 ? utf8_length(name, i) : 1;
    unsigned code = 0;
    if (n > 1 && !(c == 0xC2 && static_cast<unsigned char>(name[i + 1]) < 0xA0) &&
        invisible_length(name, i, code) == 0) {
      dir.append(name, i, n);
      i += n;
      continue;
    }
    const bool leading = dir.find_first_not_of('_') == std::string::npos;
    const bool keep = c < 0x80 && (std::isalnum(c) != 0 || c == '-' || c == '_' || (c == '.' && !leading));
    dir += keep ? static_cast<char>(c) : '_';
    i += n == 0 ? 1 : n;
  }
  if (dir.empty()) dir = "_";
  if (dir != scenario_name) {
    std::uint32_t h = 2166136261u;  // FNV-1a: the same directory for the same name on every machine
    for (const char c : scenario_name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    char hex[10];
    std::snprintf(hex, sizeof hex, "-%08x", h);
    dir += hex;
  }
  return sub.empty() ? std::filesystem::path("out") / dir : std::filesystem::path("out") / dir / sub;
}

CLI::Validator finite_number(double lo, double hi, bool lo_open, bool hi_open) {
  auto range = [lo, hi, lo_open, hi_open]() {
    std::ostringstream s;
    s << (lo_open ? "> " : ">= ") << lo;
    if (std::isfinite(hi)) {
      s << (hi_open ? " and < " : " and <= ");
      if (hi == std::floor(hi) && std::abs(hi) < 1e15)
        s << static_cast<long long>(hi);  // 31536000, not 3.1536e+07
      else
        s << hi;
    }
    return s.str();
  };
  return CLI::Validator(
      [lo, hi, lo_open, hi_open, range](const std::string& text) -> std::string {
        double v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) ||
            (lo_open ? v <= lo : v < lo) || (hi_open ? v >= hi : v > hi))
          // With no upper bound, "inf" (or 1e400) was refused as if it were not >= 0: the bound it misses
          // is being finite.
          return std::string(std::isfinite(hi) ? "want a number " : "want a finite number ") + range() +
                 ", got \"" + text + "\"";
        return "";
      },
      "NUMBER");
}

CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](const std::string& text) -> std::string {
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
          return "want a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got \"" +
                 text + "\"";
        return "";
      },
      hi == UINT64_MAX ? std::string("UINT64")
                       : "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

double deadline_flag_seconds(const std::string& text) {
  const auto a = text.find_first_not_of(" \t"), b = text.find_last_not_of(" \t");
  const std::string_view d =
      a == std::string::npos ? std::string_view() : std::string_view(text).substr(a, b - a + 1);
  try {
    const Duration s = parse_duration(d);
    if (s <= Duration::zero()) throw std::invalid_argument("must be > 0, got " + shortened(text));
    return s.seconds();
  } catch (const std::invalid_argument& e) {
    throw InputError({}, "--deadline", e.what());
  }
}

void refuse_file_in_the_way(const std::filesystem::path& dir, const std::filesystem::path& wanted,
                            const std::string& then) {
  std::error_code ec;
  for (std::filesystem::path p = dir; !p.empty(); p = p.parent_path()) {
    const auto st = std::filesystem::status(p, ec);
    if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
      throw InputError({}, "--out",
                       p.string() + " is a file, not a directory" +
                           (p == wanted ? std::string() : " (" + wanted.string() + " would be made in it)") +
                           ": " + then);
    if (std::filesystem::exists(st) || p == p.parent_path()) return;
  }
}

namespace {
std::vector<std::filesystem::path> g_made_dirs;  // by make_out_dir, outermost first
}  // namespace

bool remove_made_dirs() {
  bool removed = false;
  std::error_code ec;
  for (auto it = g_made_dirs.rbegin(); it != g_made_dirs.rend(); ++it)
    if (std::filesystem::is_empty(*it, ec) && !ec && std::filesystem::remove(*it, ec)) removed = true;
  return removed;
}

std::filesystem::path make_out_dir(const std::string& out_dir, const std::string& scenario_name,
                                   const std::string& sub) {
  const std::filesystem::path dir = out_dir_path(out_dir, scenario_name, sub);
  refuse_file_in_the_way(dir, dir, "--out names the directory the results go in");
  std::error_code ec;
  // A symlink to nothing: said so (creating the directory fails with "File exists").
  for (std::filesystem::path p = dir; !p.empty() && p != p.parent_path(); p = p.parent_path())
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec)) &&
        !std::filesystem::exists(p, ec)) {
      const std::filesystem::path to = std::filesystem::read_symlink(p, ec);
      throw InputError({}, "--out",
                       p.string() + " is a symlink to " + to.string() +
                           ", which does not exist: make it, or name another directory");
    }
  // The directories it makes, outermost first: removed, if left empty, when no result is written (and by
  // a signal that ends the process at once).
  std::vector<std::filesystem::path> missing;
  for (std::filesystem::path p = dir; !p.empty() && p != p.parent_path() && !std::filesystem::exists(p, ec);
       p = p.parent_path())
    missing.insert(missing.begin(), p);
  std::filesystem::create_directories(dir, ec);
  if (!ec)
    for (const std::filesystem::path& p : missing)
      if (std::filesystem::is_directory(p, ec)) {
        leftovers::add_directory(p.c_str());
        g_made_dirs.push_back(p);
      }
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError({}, "--out",
                     "cannot make directory " + dir.string() + " (" +
                         (ec ? ec.message() : std::string("a file of that name is in the way")) + ")");
  // A directory that is there but takes no files (read-only, /sys, another user's): found now, before the
  // run, not when its results are written. A file is made and removed (as root, access() says yes to
  // directories no file can be made in).
  const std::filesystem::path probe = dir / (".shardflow-write-check-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    throw InputError(
        {}, "--out",
        "cannot write in directory " + dir.string() + " (" + std::generic_category().message(err) + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return dir;
}

namespace {

// "cannot write PATH (WHY)": what write_file and write_results throw or return.
std::string cannot_write(const std::filesystem::path& path, const std::string& why) {
  return "cannot write " + path.string() + " (" + why + ")";
}

// The files write_results' `write` made, each in a temporary file beside its place, and the stale files it
// removes: put in place together once every one is written (null outside write_results).
struct Staged {
  std::filesystem::path temporary, place;
  int slot = -1;  // its leftovers slot (removed if a signal ends the process at once)
};
struct Staging {
  std::vector<Staged> files;
  std::vector<std::filesystem::path> removed;
};
Staging* g_staging = nullptr;
bool g_partly_put = false;  // the last write_results put some of its files in place, not all

// An exclusive lock on the directories of `paths` (flock, each in path order) for as long as it lives:
// two commands writing results into one directory at once put their sets in place one after the other,
// never one's trace beside the other's metrics.
class DirLocks {
 public:
  explicit DirLocks(std::vector<std::filesystem::path> dirs) {
    std::sort(dirs.begin(), dirs.end());
    dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
    for (const std::filesystem::path& d : dirs) {
      const int fd = ::open(d.empty() ? "." : d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) continue;  // not lockable (gone, not a directory): renamed without the lock
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
      fds_.push_back(fd);
    }
  }
  ~DirLocks() {
    for (const int fd : fds_) ::close(fd);  // closing releases the lock
  }
  DirLocks(const DirLocks&) = delete;
  DirLocks& operator=(const DirLocks&) = delete;

 private:
  std::vector<int> fds_;
};

}  // namespace

std::string write_results(const std::function<void()>& write) {
  namespace fs = std::filesystem;
  Staging staging;
  g_partly_put = false;
  std::error_code ec;
  {
    // Staged for as long as `write` runs, however it ends; a failure removes what it staged.
    struct Stage {
      Staging& staging;
      bool done = false;
      explicit Stage(Staging& s) : staging(s) { g_staging = &s; }
      Stage(const Stage&) = delete;
      Stage& operator=(const Stage&) = delete;
      ~Stage() {
        g_staging = nullptr;
        std::error_code ignored;
        if (!done)
          for (const Staged& f : staging.files) {
            std::filesystem::remove(f.temporary, ignored);
            leftovers::remove_file(f.slot);
          }
      }
    } stage(staging);
    try {
      write();
    } catch (const std::exception& e) {
      // Nothing is put in place: the files there stay as a set (an earlier run's, or none).
      return e.what();
    }
    stage.done = true;
  }
  std::vector<fs::path> dirs;
  for (const Staged& f : staging.files) dirs.push_back(f.place.parent_path());
  for (const fs::path& gone : staging.removed) dirs.push_back(gone.parent_path());
  const DirLocks lock(std::move(dirs));
  for (std::size_t i = 0; i < staging.files.size(); ++i) {
    const Staged& f = staging.files[i];
    const fs::path& place = f.place;
    fs::rename(f.temporary, place, ec);
    leftovers::remove_file(f.slot);
    if (ec) {
      // Rare (the directory changed under us): what was renamed stays, the rest is said.
      const std::string why = ec.message();
      std::string left;
      for (std::size_t k = i; k < staging.files.size(); ++k) {
        fs::remove(staging.files[k].temporary, ec);
        leftovers::remove_file(staging.files[k].slot);
        left += (left.empty() ? "" : ", ") + staging.files[k].place.filename().string();
      }
      g_partly_put = i > 0;
      return cannot_write(place, why) + "; " + left + " not written" +
             (i > 0 ? ", the files before them are this run's" : "");
    }
  }
  for (const fs::path& gone : staging.removed) fs::remove(gone, ec);
  return "";
}

void remove_result(const std::filesystem::path& path) {
  if (g_staging != nullptr) {
    g_staging->removed.push_back(path);
    return;
  }
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

void remove_stale_command_logs(const std::filesystem::path& dir, const std::set<std::string>& ours,
                               std::filesystem::file_time_type began) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (const std::string name = entry.path().filename().string();
        exec::is_command_log_name(name) && !ours.count(name) && entry.is_regular_file(ec) &&
        entry.last_write_time(ec) < began && !ec)
      remove_result(entry.path());
}

int results_not_written(const std::string& command, const std::string& error,
                        const std::filesystem::path& dir, bool summary_shown, bool made_dir) {
  std::fflush(stdout);
  std::error_code ec;
  // A directory this command made and left empty is removed, not left looking like a result (and the
  // ones it made around it).
  const bool removed = made_dir && remove_made_dirs();
  std::cerr << command << ": " << printable(error) << ": the results in " << printable(dir.string())
            << (g_partly_put ? " are not all written"
                : removed    ? " are not written (the empty directory it made is removed)"
                             : " are not written: the files there are as they were")
            << (summary_shown ? " (the summary is above)" : "") << "\n";
  return 1;
}

const std::string* same_path_in(const std::string& path, const std::vector<std::string>& paths) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  if (ec) return nullptr;
  for (const std::string& q : paths)
    if (std::filesystem::weakly_canonical(q, ec) == p && !ec) return &q;
  return nullptr;
}

std::ifstream open_input(const std::filesystem::path& path, const std::string& missing) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) throw InputError({path.string(), 0, 0}, "", missing);
  if (std::filesystem::is_directory(st))
    throw InputError({path.string(), 0, 0}, "", "is a directory, not the file expected here");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(
        {path.string(), 0, 0}, "",
        "cannot be read (" +
            (errno != 0 ? std::generic_category().message(errno) : std::string("cannot open it")) + ")");
  return in;
}

std::function<void(double)> runs_progress(const char* verb, bool show, double& done) {
  return [verb, show, &done](double d) {
    done = d;
    if (show) std::fprintf(stderr, "\r%s... %3.0f%%", verb, d * 100);
  };
}

int interrupted_runs(const std::string& command, const std::filesystem::path& dir, bool made_dir,
                     const std::string& file, double done, const Interruptible& guard) {
  std::error_code ec;
  if (made_dir) remove_made_dirs();
  std::cerr << command << ": interrupted";
  if (done >= 0) {
    char share[32];
    std::snprintf(share, sizeof share, "%.0f%%", done * 100);
    std::cerr << " with " << share << " of its runs done";
  }
  std::cerr << ": nothing written (its figures need every run; run it again, with fewer replications or "
            << (command == "compare" ? "variants" : "values") << " for a shorter one)";
  if (!made_dir && std::filesystem::exists(dir / file, ec))
    std::cerr << "; " << (dir / file).string() << " is from an earlier " << command;
  std::cerr << "\n";
  return guard.exit_status();
}

std::vector<std::string> load_inputs(const std::string& file, const LoadArgs& load) {
  std::vector<std::string> inputs = {file};
  inputs.insert(inputs.end(), load.overlays.begin(), load.overlays.end());
  if (!load.cluster.empty() && load.cluster != "local") inputs.push_back(load.cluster);
  return inputs;
}

void refuse_outputs_over_inputs(const std::filesystem::path& dir, std::initializer_list<const char*> outputs,
                                const std::vector<std::string>& inputs) {
  for (const char* name : outputs) {
    const std::string out = (dir / name).string();
    if (const std::string* in = same_path_in(out, inputs))
      throw InputError({}, "--out",
                       out + " would be written over " + *in +
                           ", an input of this command: name another directory (or move the input)");
  }
}

// Written to a file beside it, then renamed over it: a `write` that throws (bad input read while
// writing) or a full disk leaves the file that was there as it was, not empty or cut short. Inside
// write_results the rename waits until every file of the set is written.
void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A device (/dev/null, /dev/stdout) or a pipe, or a symlink to one, is written in place, never replaced.
  // A symlink to a file (or to nothing) is replaced by the file, as `sed -i` does: the file it pointed to,
  // perhaps outside the output directory, is left as it was.
  const fs::file_status st = fs::status(path, ec);
  // A directory in the way is found before anything is written (a rename over it would fail only when the
  // set is put in place).
  if (fs::is_directory(st))
    throw std::runtime_error(cannot_write(path, std::generic_category().message(EISDIR)));
  const bool in_place = fs::exists(st) && !fs::is_regular_file(st);
  // Beside it, named after it and this process; a name too long for that gets a short one.
  const std::string pid = std::to_string(::getpid());
  std::string name = "." + path.filename().string() + ".tmp-" + pid;
  if (name.size() > 255) {
    char hash[32];
    std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(path.filename().string()));
    name = ".shardflow-" + std::string(hash) + ".tmp-" + pid;
  }
  // The directory gone since it was made (removed while the run went on): made again rather than the
  // run's results lost.
  if (!in_place && !path.parent_path().empty() && !fs::exists(path.parent_path(), ec))
    fs::create_directories(path.parent_path(), ec);
  const fs::path target = in_place ? path : path.parent_path() / name;
  // Registered before it exists: a signal that ends the process at once removes it (leftovers).
  const int slot = in_place ? -1 : leftovers::add_file(target.c_str());
  errno = 0;
  std::ofstream out(target);
  if (!out) {
    const int err = errno;
    leftovers::remove_file(slot);
    throw std::runtime_error(
        cannot_write(path, err != 0 ? std::generic_category().message(err) : std::string("cannot open it")));
  }
  try {
    errno = 0;
    write(out);
    out.close();
    if (!out) {
      const int err = errno;  // of the write or close that failed (a full disk: ENOSPC)
      throw std::runtime_error(
          "error while writing " + path.string() +
          (err != 0 ? " (" + std::generic_category().message(err) + ")" : std::string()));
    }
  } catch (...) {
    out.close();
    if (!in_place) fs::remove(target, ec);
    leftovers::remove_file(slot);
    throw;
  }
  if (in_place) return;
  if (g_staging != nullptr) {
    g_staging->files.push_back({target, path, slot});
    return;
  }
  fs::rename(target, path, ec);
  leftovers::remove_file(slot);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(target, ec);
    throw std::runtime_error(cannot_write(path, why));
  }
}

}  // namespace shardflow::cli
