// A JSON document read with nlohmann's SAX parser, keeping the byte offset of every value and key, so
// that an importer reports bad values at file:line:col as the YAML reader does. Private to core.
//
//   const JsonDocument doc = parse_json_document(text, "instance.json");  // InputError on bad JSON
//   const JsonValue& root = doc.root();
//   if (const JsonValue* w = doc.member(root, "workflow")) doc.where(*w);  // instance.json:3:15
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <shardflow/core/error.hpp>

namespace shardflow {

struct JsonValue {
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool integer = false;      // a number written without fraction or exponent
  bool flag = false;         // boolean
  std::uint32_t offset = 0;  // byte offset of the value's first character
  double number = 0;
  std::string text;                  // string
  std::vector<std::uint32_t> items;  // array: elements; object: member values (indexes into the document)
  std::vector<std::string> keys;     // object: member names, in file order
  std::vector<std::uint32_t> key_offsets;
};

class JsonDocument {
 public:
  JsonDocument(std::string file, std::string_view text) : file_(std::move(file)), text_(text) {}
  [[nodiscard]] const JsonValue& root() const { return values_.front(); }
  [[nodiscard]] const JsonValue& at(std::uint32_t i) const { return values_[i]; }
  /// The member `key` of an object (the first, if repeated), or nullptr.
  [[nodiscard]] const JsonValue* member(const JsonValue& object, std::string_view key) const;
  /// The place of a byte offset, a value, or an object's key.
  [[nodiscard]] SourceLocation where(std::size_t offset) const;
  [[nodiscard]] SourceLocation where(const JsonValue& v) const { return where(v.offset); }
  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::size_t size() const { return values_.size(); }

 private:
  friend JsonDocument parse_json_document(std::string_view text, const std::string& file);
  friend class JsonBuilder;
  std::string file_;
  std::string_view text_;
  std::vector<JsonValue> values_;
  // Byte offsets of the line starts, found when the first place is asked for.
  mutable std::vector<std::size_t> lines_;
};

/// Parses `text` (a JSON document from `file`). Invalid JSON is an InputError at the offending byte's
/// file:line:col: "invalid JSON: ...". `text` must outlive the document.
JsonDocument parse_json_document(std::string_view text, const std::string& file);

/// "a string", "a number", ... for messages.
std::string_view json_kind_name(JsonValue::Kind kind);

}  // namespace shardflow
