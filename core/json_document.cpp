#include "json_document.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
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

const JsonValue* JsonDocument::member(const JsonValue& object, std::string_view k) const {
  if (object.kind != JsonValue::Kind::object) return nullptr;
  for (std::uint32_t i = 0; i < object.count; ++i)
    if (key(object, i) == k) return &item(object, i);
  return nullptr;
}

SourceLocation JsonDocument::where(std::size_t offset) const {
  if (lines_.empty()) {
    lines_.push_back(0);
    for (const char *p = text_.data(), *end = p + text_.size();
         (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)))) != nullptr;)
      lines_.push_back(static_cast<std::size_t>(++p - text_.data()));
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
bool blank(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
bool joins(char c) {  // whether removing blanks next to c could join two tokens into one
  return c != '{' && c != '}' && c != '[' && c != ']' && c != ',' && c != ':' && c != '"';
}

// The text without the blanks between tokens (kept inside strings, and as one space where two tokens
// would otherwise touch), and where each run of it starts in the original.
struct Compact {
  std::string text;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;  // (compact offset, original offset)

  explicit Compact(std::string_view in) {
    text.reserve(in.size() / 2 + 16);
    runs.emplace_back(0, 0);
    const std::size_t n = in.size();
    std::size_t i = 0;
    while (i < n) {
      const char c = in[i];
      if (blank(c)) {
        std::size_t j = i + 1;
        for (;;) {  // indentation: spaces 8 at a time
          std::uint64_t w = 0;
          while (j + 8 <= n && (std::memcpy(&w, in.data() + j, 8), w == 0x2020202020202020ull)) j += 8;
          if (j < n && blank(in[j])) {
            ++j;
            continue;
          }
          break;
        }
        if (!text.empty() && j < n && joins(text.back()) && joins(in[j])) text.push_back(' ');
        i = j;
        runs.emplace_back(static_cast<std::uint32_t>(text.size()), static_cast<std::uint32_t>(i));
      } else if (c == '"') {
        // The closing quote: the next quote after an even number of backslashes.
        std::size_t j = i + 1;
        for (;;) {
          const void* q = j < n ? std::memchr(in.data() + j, '"', n - j) : nullptr;
          if (q == nullptr) {
            j = n;
            break;
          }
          j = static_cast<std::size_t>(static_cast<const char*>(q) - in.data());
          std::size_t slashes = 0;
          while (j - slashes > i + 1 && in[j - 1 - slashes] == '\\') ++slashes;
          if (slashes % 2 == 0) break;
          ++j;
        }
        j = std::min(j + 1, n);
        text.append(in.substr(i, j - i));
        i = j;
      } else {
        std::size_t j = i + 1;
        while (j < n && !blank(in[j]) && in[j] != '"') ++j;
        text.append(in.substr(i, j - i));
        i = j;
      }
    }
  }
  // Offsets asked for in increasing order (the parser's) move a cursor instead of searching.
  mutable std::size_t cursor = 0;
  [[nodiscard]] std::size_t original(std::size_t offset) const {
    if (cursor < runs.size() && runs[cursor].first <= offset) {
      while (cursor + 1 < runs.size() && runs[cursor + 1].first <= offset) ++cursor;
      return runs[cursor].second + (offset - runs[cursor].first);
    }
    auto it = std::upper_bound(
        runs.begin(), runs.end(),
        std::pair<std::uint32_t, std::uint32_t>(static_cast<std::uint32_t>(offset), UINT32_MAX));
    --it;
    return it->second + (offset - it->first);
  }
};

}  // namespace

class JsonBuilder {
 public:
  using json = nlohmann::json;
  JsonBuilder(JsonDocument& doc, const Compact& compact) : doc_(doc), c_(compact), text_(compact.text) {}

  const char* last = nullptr;

  bool null() { return add(JsonValue::Kind::null, literal_start(4)); }
  bool boolean(bool v) {
    if (!add(JsonValue::Kind::boolean, literal_start(v ? 4 : 5))) return false;
    doc_.values_.back().flag = v;
    return true;
  }
  bool number_integer(json::number_integer_t v) { return number(static_cast<double>(v), true); }
  bool number_unsigned(json::number_unsigned_t v) { return number(static_cast<double>(v), true); }
  bool number_float(json::number_float_t v, const json::string_t& /*raw*/) { return number(v, false); }
  bool string(json::string_t& v) {
    if (!add(JsonValue::Kind::string, string_start())) return false;
    JsonValue& s = doc_.values_.back();
    s.first = static_cast<std::uint32_t>(doc_.chars_.size());
    s.count = static_cast<std::uint32_t>(v.size());
    doc_.chars_ += v;
    return true;
  }
  bool binary(json::binary_t& /*unused*/) { return false; }
  bool start_object(std::size_t /*unused*/) { return open(JsonValue::Kind::object); }
  bool key(json::string_t& k) {
    JsonDocument::Item it;
    it.key_first = static_cast<std::uint32_t>(doc_.chars_.size());
    it.key_count = static_cast<std::uint32_t>(k.size());
    it.key_offset = static_cast<std::uint32_t>(original(string_start()));
    doc_.chars_ += k;
    pending_.push_back(it);
    key_pending_ = true;
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*unused*/) { return open(JsonValue::Kind::array); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string& /*token*/,
                   const nlohmann::detail::exception& ex) {
    error_offset = original(position == 0 ? 0 : position - 1);
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error while ...": keep
    // what follows the parser's own place (ours is in the message's prefix, in the file's lines).
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
  [[nodiscard]] std::size_t original(std::size_t compact) const { return c_.original(compact); }
  [[nodiscard]] std::size_t literal_start(std::size_t length) const {
    return here() + 1 - std::min(here() + 1, length);
  }
  // `last` is the closing quote: back to the opening one (a quote after an odd number of backslashes is
  // part of the string).
  [[nodiscard]] std::size_t string_start() const {
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
  [[nodiscard]] std::size_t number_start() const {
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
    frames_.push_back(
        {static_cast<std::uint32_t>(doc_.values_.size() - 1), static_cast<std::uint32_t>(pending_.size())});
    return true;
  }
  // The container's items, contiguous at the end of pending_ (the inner ones have closed), move to the
  // document's items.
  bool close() {
    const Frame f = frames_.back();
    frames_.pop_back();
    JsonValue& v = doc_.values_[f.value];
    v.first = static_cast<std::uint32_t>(doc_.items_.size());
    v.count = static_cast<std::uint32_t>(pending_.size() - f.pending);
    doc_.items_.insert(doc_.items_.end(), pending_.begin() + f.pending, pending_.end());
    pending_.resize(f.pending);
    return true;
  }
  bool add(JsonValue::Kind kind, std::size_t compact_offset) {
    if (doc_.values_.size() >= std::numeric_limits<std::uint32_t>::max() - 1) {
      too_big = true;
      return false;
    }
    const auto index = static_cast<std::uint32_t>(doc_.values_.size());
    JsonValue v;
    v.kind = kind;
    v.offset = static_cast<std::uint32_t>(original(compact_offset));
    doc_.values_.push_back(v);
    if (!frames_.empty()) {
      if (key_pending_) {
        pending_.back().value = index;  // the member whose key came last
        key_pending_ = false;
      } else {
        pending_.push_back({index, 0, 0, 0});
      }
    }
    return true;
  }

  struct Frame {
    std::uint32_t value, pending;
  };
  JsonDocument& doc_;
  const Compact& c_;
  std::string_view text_;
  std::vector<Frame> frames_;
  std::vector<JsonDocument::Item> pending_;
  bool key_pending_ = false;
};

JsonDocument parse_json_document(std::string_view text, const std::string& file) {
  JsonDocument doc(file, text);
  if (text.size() >= std::numeric_limits<std::uint32_t>::max() / 2)
    throw InputError(SourceLocation{file, 0, 0}, "", "the file is too large (2 GiB or more)");
  const Compact compact(text);
  doc.values_.reserve(compact.text.size() / 12 + 1);
  doc.items_.reserve(compact.text.size() / 12 + 1);
  JsonBuilder b(doc, compact);
  TrackingIterator first{compact.text.data(), &b.last};
  TrackingIterator end{compact.text.data() + compact.text.size(), &b.last};
  if (!nlohmann::json::sax_parse(first, end, &b)) {
    if (b.too_big) throw InputError(doc.where(text.size()), "", "too many JSON values");
    throw InputError(doc.where(b.error_offset), "", "invalid JSON: " + b.error);
  }
  return doc;
}

}  // namespace shardflow
