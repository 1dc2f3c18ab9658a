#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <shardflow/core/error.hpp>

#include "commands.hpp"

namespace shardflow::cli {

std::filesystem::path out_dir_path(const std::string& out_dir, const std::string& scenario_name) {
  return out_dir.empty() ? std::filesystem::path("out") / scenario_name : std::filesystem::path(out_dir);
}

std::filesystem::path make_out_dir(const std::string& out_dir, const std::string& scenario_name) {
  const std::filesystem::path dir = out_dir_path(out_dir, scenario_name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError({}, "--out",
                     "cannot make directory " + dir.string() + " (" +
                         (ec ? ec.message() : std::string("a file of that name is in the way")) + ")");
  return dir;
}

void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  write(out);
  out.close();
  if (!out) throw std::runtime_error("error while writing " + path.string());
}

}  // namespace shardflow::cli
