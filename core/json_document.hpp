// A JSON document read by a strict RFC 8259 reader of our own, keeping the byte offset of every value and
// key, so that an importer reports bad values at file:line:col as the YAML reader does. Private to core.
//
//   const JsonDocument doc = parse_json_document(text, "instance.json");  // InputError on bad JSON
//   if (const JsonValue* w = doc.member(doc.root(), "workflow")) doc.where(*w);  // instance.json:3:15
//   for (std::uint32_t i = 0; i < w->count; ++i) doc.item(*w, i) ...
//
// The values live in flat arrays (no allocation per value). The reader accepts exactly what nlohmann's
// parser accepts (fuzz/importers_fuzz.cpp checks it): UTF-8 validated strings, \u escapes with surrogate
// pairs, numbers that fit a double (integers that fit 64 bits are exact), any nesting depth, an optional
// UTF-8 byte order mark, and, as nlohmann, a NUL byte where a token would start ends the document.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>

namespace shardflow {

struct JsonValue {
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool integer = false;      // a number written without fraction or exponent
  bool flag = false;         // boolean: its value; string: decoded (escapes), so its text is not the file's
  std::uint32_t offset = 0;  // byte offset of the value's first character in the file
  double number = 0;
  // array, object: elements or members are the document's items first..first+count; string: its text is
  // the file's bytes first..first+count, or, when it had an escape (flag), the document's decoded
  // characters first..first+count.
  std::uint32_t first = 0, count = 0;
};

class JsonDocument {
 public:
  [[nodiscard]] const JsonValue& root() const { return values_.front(); }
  /// Element or member value i of an array or object.
  [[nodiscard]] const JsonValue& item(const JsonValue& v, std::uint32_t i) const {
    return values_[items_[v.first + i].value];
  }
  /// Member i's name, and the byte offset of its key.
  [[nodiscard]] std::string_view key(const JsonValue& object, std::uint32_t i) const {
    const Item& it = items_[object.first + i];
    return (it.key_count & kDecoded) != 0
               ? std::string_view(chars_).substr(it.key_first, it.key_count & ~kDecoded)
               : text_.substr(it.key_first, it.key_count);
  }
  [[nodiscard]] std::uint32_t key_offset(const JsonValue& object, std::uint32_t i) const {
    return items_[object.first + i].key_offset;
  }
  /// A string's text.
  [[nodiscard]] std::string_view text(const JsonValue& v) const {
    return v.flag ? std::string_view(chars_).substr(v.first, v.count) : text_.substr(v.first, v.count);
  }
  /// A number's text as the file has it ("2e+15" reads back as 2000000000000000).
  [[nodiscard]] std::string_view number_text(const JsonValue& v) const;
  /// The member `key` of an object (the first, if repeated), or nullptr.
  [[nodiscard]] const JsonValue* member(const JsonValue& object, std::string_view key) const;
  /// The place of a byte offset of the file, or of a value.
  [[nodiscard]] SourceLocation where(std::size_t offset) const;
  [[nodiscard]] SourceLocation where(const JsonValue& v) const { return where(v.offset); }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::size_t size() const { return values_.size(); }

 private:
  friend JsonDocument parse_json_document(std::string_view text, const std::string& file);
  friend class JsonBuilder;
  // A key's key_count with this bit: the key had an escape, its decoded text is in chars_ (a file is
  // under 2 GiB, so no count has it otherwise).
  static constexpr std::uint32_t kDecoded = std::uint32_t{1} << 31;
  struct Item {
    std::uint32_t value = 0;
    std::uint32_t key_first = 0, key_count = 0, key_offset = 0;  // objects only
  };
  JsonDocument(std::string file, std::string_view text) : file_(std::move(file)), text_(text) {}
  std::string file_;
  std::string_view text_;
  std::vector<JsonValue> values_;
  std::vector<Item> items_;
  std::string chars_;  // the decoded text of the strings and keys that had an escape; the others are views
  // Byte offsets of the line starts, found when the first place is asked for.
  mutable std::vector<std::size_t> lines_;
  ColumnIndex columns_;  // where()'s columns on long lines
};

/// Parses `text` (a JSON document from `file`). Invalid JSON is an InputError at the offending byte's
/// file:line:col: "invalid JSON: unexpected ','; expected a value (...)". `text` must outlive the document.
JsonDocument parse_json_document(std::string_view text, const std::string& file);

/// "a string", "a number", ... for messages.
std::string_view json_kind_name(JsonValue::Kind kind);

}  // namespace shardflow
