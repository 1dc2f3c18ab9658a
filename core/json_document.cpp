#include "json_document.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include <shardflow/core/text.hpp>

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

std::string_view JsonDocument::number_text(const JsonValue& v) const {
  const std::size_t end = text_.find_first_not_of("+-.0123456789eE", v.offset);
  return text_.substr(v.offset, end == std::string_view::npos ? std::string_view::npos : end - v.offset);
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
  // The column in characters, as an editor counts them: a line with "é" before the place counts it once,
  // and a byte order mark not at all.
  return SourceLocation{file_, static_cast<int>(line), columns_.column(text_, lines_[line - 1], offset)};
}

namespace {

// Character classes of the reader, one table lookup per byte.
enum : std::uint8_t { kPlain = 0, kQuote = 1, kBackslash = 2, kControl = 3, kHigh = 4 };
constexpr std::array<std::uint8_t, 256> make_string_classes() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<std::size_t>(c)] = kControl;
  for (int c = 0x80; c < 0x100; ++c) t[static_cast<std::size_t>(c)] = kHigh;
  t['"'] = kQuote;
  t['\\'] = kBackslash;
  return t;
}
constexpr std::array<std::uint8_t, 256> kStringClass = make_string_classes();

bool blank(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// How a byte reads in a message: 'x', or 0xC3 when it is not printable ASCII.
std::string shown(const char* p, const char* end) {
  if (p >= end) return "the end of the file";
  const auto c = static_cast<unsigned char>(*p);
  if (c >= 0x20 && c < 0x7f) return std::string("'") + *p + "'";
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string("byte 0x") + kHex[c >> 4] + kHex[c & 15];
}

}  // namespace

// A strict RFC 8259 reader (what nlohmann's parser accepts, and nothing else: see parse_json_document),
// iterative so that nesting depth costs memory, not stack. Values go straight into the document's flat
// arrays; a container's items collect on pending_ until it closes.
class JsonBuilder {
 public:
  JsonBuilder(JsonDocument& doc, std::string_view text)
      : doc_(doc), begin_(text.data()), p_(text.data()), end_(text.data() + text.size()) {}

  void read() {
    // A UTF-8 byte order mark is skipped, as nlohmann does.
    if (p_ < end_ && static_cast<unsigned char>(*p_) == 0xEF) {
      if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[1]) == 0xBB &&
          static_cast<unsigned char>(p_[2]) == 0xBF)
        p_ += 3;
      else
        fail(p_, "invalid byte order mark (a file may start with EF BB BF, the UTF-8 one)");
    }
    value();
    // A container's items are read here, not by value(), so that nesting costs no stack.
    while (!frames_.empty()) {
      Frame& f = frames_.back();
      skip_blanks();
      const bool first = f.first;
      f.first = false;
      if (f.object) {
        if (p_ < end_ && *p_ == '}') {
          ++p_;
          close();
          continue;
        }
        if (!first) {
          if (at_end()) fail(end_, "unexpected end of the file inside an object; expected ',' or '}'");
          if (*p_ != ',')
            fail(p_, "unexpected " + shown(p_, end_) + " after an object's member; expected ',' or '}'");
          ++p_;
        }
        member();
      } else {
        if (p_ < end_ && *p_ == ']') {
          ++p_;
          close();
          continue;
        }
        if (!first) {
          if (at_end()) fail(end_, "unexpected end of the file inside an array; expected ',' or ']'");
          if (*p_ != ',')
            fail(p_, "unexpected " + shown(p_, end_) + " after an array's element; expected ',' or ']'");
          ++p_;
        }
        value();
      }
    }
    skip_blanks();
    if (!at_end())
      fail(p_, "unexpected " + shown(p_, end_) + " after the document's value; expected the end of the file");
  }

 private:
  struct Frame {
    std::uint32_t value, pending;
    bool object;
    bool first;  // no item read yet
  };

  [[noreturn]] void fail(const char* at, const std::string& message) const {
    throw InputError(doc_.where(static_cast<std::size_t>(at - begin_)), "", "invalid JSON: " + message);
  }

  // nlohmann ends the input at a NUL byte where a token would start; so does this reader, so that both
  // accept the same files.
  [[nodiscard]] bool at_end() const { return p_ == end_ || *p_ == '\0'; }

  void skip_blanks() {
    for (;;) {
      // Indentation: spaces 8 at a time.
      std::uint64_t w = 0;
      while (end_ - p_ >= 8 && (std::memcpy(&w, p_, 8), w == 0x2020202020202020ULL)) p_ += 8;
      if (p_ < end_ && blank(*p_)) {
        ++p_;
        continue;
      }
      return;
    }
  }

  // One value; a container is opened (its items are read by read()'s loop), a scalar is read whole.
  void value() {
    skip_blanks();
    if (at_end()) fail(end_, "unexpected end of the file; expected a value");
    const char* start = p_;
    switch (*p_) {
      case '{': {
        ++p_;
        open(JsonValue::Kind::object, start);
        return;
      }
      case '[': {
        ++p_;
        open(JsonValue::Kind::array, start);
        return;
      }
      case '"': {
        JsonValue& s = add(JsonValue::Kind::string, start);
        const Text t = string();
        s.first = t.first;
        s.count = t.count;
        s.flag = t.decoded;
        return;
      }
      case 't':
        literal("true", start);
        add(JsonValue::Kind::boolean, start).flag = true;
        return;
      case 'f':
        literal("false", start);
        add(JsonValue::Kind::boolean, start);
        return;
      case 'n':
        literal("null", start);
        add(JsonValue::Kind::null, start);
        return;
      default:
        if (*p_ == '-' || digit(*p_)) {
          number(start);
          return;
        }
        fail(p_, "unexpected " + shown(p_, end_) +
                     "; expected a value (an object, an array, a string, a number, "
                     "true, false or null)");
    }
  }

  // A member's key, ':' and value.
  void member() {
    skip_blanks();
    if (at_end()) fail(end_, "unexpected end of the file; expected a member's name (a string)");
    if (*p_ != '"')
      fail(p_, "unexpected " + shown(p_, end_) + "; expected a member's name (a string in double quotes)");
    JsonDocument::Item it;
    it.key_offset = static_cast<std::uint32_t>(p_ - begin_);
    const Text t = string();
    it.key_first = t.first;
    it.key_count = t.decoded ? t.count | JsonDocument::kDecoded : t.count;
    skip_blanks();
    if (at_end()) fail(end_, "unexpected end of the file; expected ':' after a member's name");
    if (*p_ != ':') fail(p_, "unexpected " + shown(p_, end_) + "; expected ':' after a member's name");
    ++p_;
    pending_.push_back(it);
    key_pending_ = true;
    value();
  }

  void literal(std::string_view word, const char* start) {
    for (std::size_t i = 0; i < word.size(); ++i, ++p_)
      if (p_ == end_ || *p_ != word[i])
        fail(p_, "invalid literal starting with " + shown(start, end_) + "; expected " + std::string(word));
  }

  // Where a string's text is: the file's bytes first..first+count, or (decoded) the document's characters.
  struct Text {
    std::uint32_t first, count;
    bool decoded;
  };

  // The string at p_ (its opening quote). Without an escape its text is the file's bytes between the
  // quotes (checked, not copied); from the first escape on it is decoded into the document's characters.
  Text string() {
    const char* open_quote = p_;
    ++p_;
    const char* text_start = p_;
    for (;;) {
      skip_plain();
      while (p_ < end_ && kStringClass[static_cast<unsigned char>(*p_)] == kPlain) ++p_;
      if (p_ == end_)
        fail(end_, "missing closing quote of the string that starts at " + column_of(open_quote));
      const std::uint8_t c = kStringClass[static_cast<unsigned char>(*p_)];
      if (c == kQuote) {
        const Text t{static_cast<std::uint32_t>(text_start - begin_),
                     static_cast<std::uint32_t>(p_ - text_start), false};
        ++p_;
        return t;
      }
      if (c == kBackslash) break;
      if (c == kControl) control_character();
      utf8(nullptr);
    }
    std::string& out = doc_.chars_;
    const auto first = static_cast<std::uint32_t>(out.size());
    out.append(text_start, static_cast<std::size_t>(p_ - text_start));
    for (;;) {
      const char* run = p_;
      skip_plain();
      while (p_ < end_ && kStringClass[static_cast<unsigned char>(*p_)] == kPlain) ++p_;
      out.append(run, static_cast<std::size_t>(p_ - run));
      if (p_ == end_)
        fail(end_, "missing closing quote of the string that starts at " + column_of(open_quote));
      switch (kStringClass[static_cast<unsigned char>(*p_)]) {
        case kQuote:
          ++p_;
          return {first, static_cast<std::uint32_t>(out.size() - first), true};
        case kBackslash:
          escape(out);
          break;
        case kControl:
          control_character();
        default:
          utf8(&out);
          break;
      }
    }
  }

  [[noreturn]] void control_character() const {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const auto c = static_cast<unsigned char>(*p_);
    fail(p_, std::string("control character U+00") + kHex[c >> 4] + kHex[c & 15] +
                 " inside a string; it must be written as an escape (\\n, \\t, \\u00XX...)");
  }

  // Skips 8 bytes at a time while none of them is a quote, a backslash, a control character or a
  // non-ASCII byte (a word where one is stops it; the byte loop after it finds which).
  void skip_plain() {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
    const auto zero_byte = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
    std::uint64_t w = 0;
    while (end_ - p_ >= 8) {
      std::memcpy(&w, p_, 8);
      const std::uint64_t special = (w & kHighs) | zero_byte(w ^ (kOnes * '"')) |
                                    zero_byte(w ^ (kOnes * '\\')) | ((w - kOnes * 0x20) & ~w & kHighs);
      if (special != 0) return;
      p_ += 8;
    }
  }

  [[nodiscard]] std::string column_of(const char* at) const {
    const SourceLocation l = doc_.where(static_cast<std::size_t>(at - begin_));
    return "line " + std::to_string(l.line) + ", column " + std::to_string(l.column);
  }

  // One UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF), checked and
  // copied to `out` unless that is null.
  void utf8(std::string* out) {
    const auto b = [&](std::ptrdiff_t i) { return p_ + i < end_ ? static_cast<unsigned char>(p_[i]) : 0U; };
    const unsigned c = b(0);
    unsigned lo = 0x80, hi = 0xBF;  // the second byte's range
    std::ptrdiff_t n = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      fail(p_, "invalid UTF-8 in a string: " + shown(p_, end_) + " cannot start a character");
    }
    for (std::ptrdiff_t i = 1; i < n; ++i) {
      const unsigned x = b(i);
      const bool ok = i == 1 ? x >= lo && x <= hi : x >= 0x80 && x <= 0xBF;
      if (!ok)
        fail(p_ + i, "invalid UTF-8 in a string: " + shown(p_ + i, end_) +
                         " cannot continue the character that starts with " + shown(p_, end_));
    }
    if (out != nullptr) out->append(p_, static_cast<std::size_t>(n));
    p_ += n;
  }

  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = p_ < end_ ? hex_value(*p_) : -1;
      if (h < 0) fail(p_, "\\u must be followed by four hexadecimal digits, got " + shown(p_, end_));
      v = v * 16 + static_cast<unsigned>(h);
      ++p_;
    }
    return v;
  }

  void escape(std::string& out) {
    const char* backslash = p_;
    ++p_;
    if (p_ == end_) fail(end_, "missing closing quote of a string (the file ends after a backslash)");
    const char c = *p_++;
    switch (c) {
      case '"':
        out.push_back('"');
        return;
      case '\\':
        out.push_back('\\');
        return;
      case '/':
        out.push_back('/');
        return;
      case 'b':
        out.push_back('\b');
        return;
      case 'f':
        out.push_back('\f');
        return;
      case 'n':
        out.push_back('\n');
        return;
      case 'r':
        out.push_back('\r');
        return;
      case 't':
        out.push_back('\t');
        return;
      case 'u':
        break;
      default:
        fail(p_ - 1, "invalid escape \\" + std::string(1, c) +
                         " in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    }
    unsigned cp = hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF)
      fail(backslash,
           "\\u" + std::string(backslash + 2, 4) + " is a low surrogate without a high surrogate before it");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
        fail(p_, "\\u" + std::string(backslash + 2, 4) +
                     " is a high surrogate; it must be followed by a low surrogate \\uDC00 to \\uDFFF");
      const char* second = p_;
      p_ += 2;
      const unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF)
        fail(second,
             "\\u" + std::string(backslash + 2, 4) +
                 " is a high surrogate; it must be followed by a low surrogate \\uDC00 to \\uDFFF, got \\u" +
                 std::string(second + 2, 4));
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?  An integer that fits 64 bits is exact (nlohmann's
  // number_integer/unsigned); anything else is read as the nearest double, and one too large for a double
  // is an error, as in nlohmann.
  void number(const char* start) {
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !digit(*p_))
      fail(p_, "invalid number: expected a digit after '-', got " + shown(p_, end_));
    std::uint64_t mantissa = 0;
    bool overflow = false;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ < end_ && digit(*p_)) {
        const auto d = static_cast<unsigned>(*p_ - '0');
        if (mantissa > (UINT64_MAX - d) / 10) overflow = true;
        mantissa = mantissa * 10 + d;
        ++p_;
      }
    }
    bool integer = true;
    if (p_ < end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (p_ == end_ || !digit(*p_))
        fail(p_, "invalid number: expected a digit after '.', got " + shown(p_, end_));
      while (p_ < end_ && digit(*p_)) ++p_;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !digit(*p_))
        fail(p_, "invalid number: expected a digit in the exponent, got " + shown(p_, end_));
      while (p_ < end_ && digit(*p_)) ++p_;
    }
    if (integer && negative && mantissa > (std::uint64_t{1} << 63)) overflow = true;
    JsonValue& v = add(JsonValue::Kind::number, start);
    if (integer && !overflow) {
      v.integer = true;
      // -0 is the integer 0, as nlohmann reads it (not the double -0.0).
      v.number = negative && mantissa != 0 ? -static_cast<double>(mantissa) : static_cast<double>(mantissa);
      return;
    }
    double d = 0;
    const auto [ptr, ec] = std::from_chars(start, p_, d);
    if (ec == std::errc::result_out_of_range || ptr != p_) {
      // Underflow (read as zero or a subnormal, as strtod does) or overflow (an error).
      const std::string copy(start, p_);
      d = std::strtod(copy.c_str(), nullptr);
    }
    if (!std::isfinite(d))
      fail(start, "number " + std::string(start, p_) + " is too large for a double (overflow)");
    v.number = d;
  }

  void open(JsonValue::Kind kind, const char* start) {
    add(kind, start);
    frames_.push_back({static_cast<std::uint32_t>(doc_.values_.size() - 1),
                       static_cast<std::uint32_t>(pending_.size()), kind == JsonValue::Kind::object, true});
  }
  // The container's items, contiguous at the end of pending_ (the inner ones have closed), move to the
  // document's items.
  void close() {
    const Frame f = frames_.back();
    frames_.pop_back();
    JsonValue& v = doc_.values_[f.value];
    v.first = static_cast<std::uint32_t>(doc_.items_.size());
    v.count = static_cast<std::uint32_t>(pending_.size() - f.pending);
    doc_.items_.insert(doc_.items_.end(), pending_.begin() + f.pending, pending_.end());
    pending_.resize(f.pending);
  }
  JsonValue& add(JsonValue::Kind kind, const char* start) {
    if (doc_.values_.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
      throw InputError(doc_.where(static_cast<std::size_t>(start - begin_)), "", "too many JSON values");
    const auto index = static_cast<std::uint32_t>(doc_.values_.size());
    JsonValue& v = doc_.values_.emplace_back();
    v.kind = kind;
    v.offset = static_cast<std::uint32_t>(start - begin_);
    if (!frames_.empty()) {
      if (key_pending_) {
        pending_.back().value = index;  // the member whose key came last
        key_pending_ = false;
      } else {
        pending_.push_back({index, 0, 0, 0});
      }
    }
    return v;
  }

  JsonDocument& doc_;
  const char* begin_;
  const char* p_;
  const char* end_;
  std::vector<Frame> frames_;
  std::vector<JsonDocument::Item> pending_;
  bool key_pending_ = false;
};

JsonDocument parse_json_document(std::string_view text, const std::string& file) {
  JsonDocument doc(file, text);
  if (text.size() >= std::numeric_limits<std::uint32_t>::max() / 2)
    throw InputError(SourceLocation{file, 0, 0}, "", "the file is too large (2 GiB or more)");
  doc.values_.reserve(text.size() / 24 + 1);
  doc.items_.reserve(text.size() / 24 + 1);
  JsonBuilder(doc, text).read();
  return doc;
}

}  // namespace shardflow
