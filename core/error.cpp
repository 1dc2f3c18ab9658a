#include <utility>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>

namespace shardflow {

std::string SourceLocation::str() const {
  if (file.empty()) return line > 0 ? std::to_string(line) + ":" + std::to_string(column) : "";
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {
std::string compose(const SourceLocation& where, const std::string& field, const std::string& message) {
  // A key or value with a NUL or a zero-width space in it, as the user cannot see it otherwise.
  std::string out = where.str();
  if (!out.empty()) out += ": ";
  if (!field.empty()) out += printable(field) + ": ";
  return out + printable(message);
}
}  // namespace

InputError::InputError(SourceLocation where, std::string field, std::string message)
    : std::runtime_error(compose(where, field, message)),
      where_(std::move(where)),
      field_(std::move(field)),
      message_(std::move(message)) {}

InputErrors::InputErrors(const std::vector<InputError>& problems)
    : InputError(problems.front().where(), problems.front().field(), problems.front().message()),
      problems_(problems) {
  for (const InputError& p : problems_) all_ += (all_.empty() ? "" : "\n") + std::string(p.what());
}

}  // namespace shardflow
