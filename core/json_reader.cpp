#include "json_reader.hpp"

#include <iterator>
#include <regex>

#include "yaml_reader.hpp"  // check_utf8_text

namespace shardflow {

std::string read_json_input(std::istream& in, const std::string& file, const char* kind) {
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw InputError({file, 0, 0}, "", std::string("cannot read the ") + kind);
  return text;
}

// Bad JSON gets nlohmann's syntax error message, as before the reader used json_document (which accepts
// exactly what nlohmann's parser accepts); the text is read by nlohmann only then.
JsonDocument parse_json_input(const std::string& text, const std::string& file) {
  // A NUL byte ends JSON input for nlohmann (and json_document, which accepts what it accepts): a file
  // cut by one read as "unexpected end of input" where it went on. shardflow writes UTF-8 without NULs.
  detail::check_utf8_text(text, file);
  try {
    return parse_json_document(text, file);
  } catch (const InputError&) {
    try {
      [[maybe_unused]] const nlohmann::json j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      // "[json.exception.parse_error.101] parse error at line 2, column 3: syntax error while ..."
      static const std::regex kAt(R"(at line (\d+), column (\d+): (.*))");
      std::smatch m;
      const std::string what = e.what();
      if (std::regex_search(what, m, kAt))
        throw InputError({file, std::stoi(m[1]), std::stoi(m[2])}, "", "not valid JSON: " + m[3].str());
      throw InputError({file, 0, 0}, "", "not valid JSON at byte " + std::to_string(e.byte) + ": " + what);
    } catch (const nlohmann::json::exception&) {
      // A number too large for a double: nlohmann's out_of_range has no place (and ended the command
      // with exit 1); json_document's error names it.
    }
    throw;
  }
}

}  // namespace shardflow
