#include "json_document.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace shardflow {

std::string_view json_kind_name(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::null:
      return "null";
    case JsonValue::Kind::boolean:
      return "a boolean";
    case JsonValue::Kind::number:
      return "a number";
    case JsonValue::Kind::string:
      return "a string";
    case JsonValue::Kind::array:
      return "an array";
    case JsonValue::Kind::object:
      return "an object";
  }
  return "a value";
}

const JsonValue* JsonDocument::member(const JsonValue& object, std::string_view key) const {
  if (object.kind != JsonValue::Kind::object) return nullptr;
  for (std::size_t i = 0; i < object.keys.size(); ++i)
    if (object.keys[i] == key) return &values_[object.items[i]];
  return nullptr;
}

SourceLocation JsonDocument::where(std::size_t offset) const {
  if (lines_.empty()) {
    lines_.push_back(0);
    for (std::size_t i = 0; i < text_.size(); ++i)
      if (text_[i] == '\n') lines_.push_back(i + 1);
  }
  offset = std::min(offset, text_.size());
  const auto it = std::upper_bound(lines_.begin(), lines_.end(), offset);
  const auto line = static_cast<std::size_t>(it - lines_.begin());  // 1-based: lines_[line-1] <= offset
  return SourceLocation{file_, static_cast<int>(line), static_cast<int>(offset - lines_[line - 1] + 1)};
}

namespace {

// The parser reads through this iterator, which notes the last character it handed out: when a SAX event
// fires, that is the token's last character (or, after a number, the one character the lexer looked
// ahead), from which the token's first character is found.
struct TrackingIterator {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char** last = nullptr;
  reference operator*() const {
    *last = p;
    return *p;
  }
  TrackingIterator& operator++() {
    ++p;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator old = *this;
    ++p;
    return old;
  }
  friend bool operator==(const TrackingIterator& a, const TrackingIterator& b) { return a.p == b.p; }
};

bool number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

}  // namespace

class JsonBuilder {
 public:
  using json = nlohmann::json;
  JsonBuilder(JsonDocument& doc, std::string_view text) : doc_(doc), text_(text) {}

  const char* last = nullptr;

  bool null() { return add(JsonValue::Kind::null, literal_start(4)); }
  bool boolean(bool v) {
    const std::size_t at = literal_start(v ? 4 : 5);
    if (!add(JsonValue::Kind::boolean, at)) return false;
    doc_.values_.back().flag = v;
    return true;
  }
  bool number_integer(json::number_integer_t v) { return number(static_cast<double>(v), true); }
  bool number_unsigned(json::number_unsigned_t v) { return number(static_cast<double>(v), true); }
  bool number_float(json::number_float_t v, const json::string_t& /*raw*/) { return number(v, false); }
  bool string(json::string_t& v) {
    if (!add(JsonValue::Kind::string, string_start())) return false;
    doc_.values_.back().text = std::move(v);
    return true;
  }
  bool binary(json::binary_t& /*unused*/) { return false; }
  bool start_object(std::size_t /*unused*/) { return open(JsonValue::Kind::object); }
  bool key(json::string_t& k) {
    JsonValue& o = doc_.values_[stack_.back()];
    o.keys.push_back(std::move(k));
    o.key_offsets.push_back(static_cast<std::uint32_t>(string_start()));
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*unused*/) { return open(JsonValue::Kind::array); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*token*/,
                   const nlohmann::detail::exception& ex) {
    error_offset = position == 0 ? 0 : position - 1;
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while ...": keep
    // what follows the parser's own place (ours is in the message's prefix).
    if (const std::size_t colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    error = what;
    return false;
  }

  std::string error;
  std::size_t error_offset = 0;
  bool too_big = false;

 private:
  [[nodiscard]] std::size_t here() const {
    return last == nullptr ? 0 : static_cast<std::size_t>(last - text_.data());
  }
  std::size_t literal_start(std::size_t length) const { return here() + 1 - std::min(here() + 1, length); }
  // `last` is the closing quote: back to the opening one (a quote after an odd number of backslashes is
  // part of the string).
  std::size_t string_start() const {
    std::size_t i = here();
    while (i > 0) {
      --i;
      if (text_[i] != '"') continue;
      std::size_t slashes = 0;
      while (i > slashes && text_[i - 1 - slashes] == '\\') ++slashes;
      if (slashes % 2 == 0) return i;
    }
    return 0;
  }
  std::size_t number_start() const {
    std::size_t i = here();
    while (i > 0 && !number_char(text_[i])) --i;
    while (i > 0 && number_char(text_[i - 1])) --i;
    return i;
  }
  bool number(double v, bool integer) {
    if (!add(JsonValue::Kind::number, number_start())) return false;
    doc_.values_.back().number = v;
    doc_.values_.back().integer = integer;
    return true;
  }
  bool open(JsonValue::Kind kind) {
    if (!add(kind, here())) return false;
    stack_.push_back(static_cast<std::uint32_t>(doc_.values_.size() - 1));
    return true;
  }
  bool add(JsonValue::Kind kind, std::size_t offset) {
    if (doc_.values_.size() >= std::numeric_limits<std::uint32_t>::max() - 1) {
      too_big = true;
      return false;
    }
    const auto index = static_cast<std::uint32_t>(doc_.values_.size());
    JsonValue v;
    v.kind = kind;
    v.offset = static_cast<std::uint32_t>(offset);
    doc_.values_.push_back(std::move(v));
    if (!stack_.empty()) doc_.values_[stack_.back()].items.push_back(index);
    return true;
  }

  JsonDocument& doc_;
  std::string_view text_;
  std::vector<std::uint32_t> stack_;
};

JsonDocument parse_json_document(std::string_view text, const std::string& file) {
  JsonDocument doc(file, text);
  if (text.size() >= std::numeric_limits<std::uint32_t>::max())
    throw InputError(SourceLocation{file, 0, 0}, "", "the file is too large (4 GiB or more)");
  doc.values_.reserve(text.size() / 16 + 1);
  JsonBuilder b(doc, text);
  TrackingIterator first{text.data(), &b.last}, end{text.data() + text.size(), &b.last};
  const bool ok = nlohmann::json::sax_parse(first, end, &b);
  if (!ok) {
    if (b.too_big)
      throw InputError(doc.where(b.last == nullptr ? 0 : b.last - text.data()), "", "too many JSON values");
    throw InputError(doc.where(b.error_offset), "", "invalid JSON: " + b.error);
  }
  return doc;
}

}  // namespace shardflow
