// Typed reading of a JSON file that shardflow wrote and a user may have edited (trace.json, metrics.json,
// sweep.json, compare.json, run.json): parse_json_input reads it into a JsonDocument (every value's place
// kept), JsonReader gets typed values from it, and every error names file:line:col and the field's path,
// as the YAML reader's do. Private to shardflow's libraries (core, planner, cli).
//
//   const std::string text = read_json_input(in, "sweep.json", "sweep");
//   const JsonDocument d = parse_json_input(text, "sweep.json");
//   const JsonReader r(d, text);
//   const int reps = static_cast<int>(r.integer(r.get(d.root(), "replications", ""), "replications", 1,
//   100000));
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <istream>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/core/units.hpp>

#include "json_document.hpp"

namespace shardflow {

// Reads a document parsed by parse_json_input (json_document.hpp: flat arrays, the place of every value)
// into typed values, each error at the value's file:line:col with its field's path. Its types and its
// messages are nlohmann's, as when the file was read into an nlohmann::json: a member given twice is read at
// its last occurrence, an integer is unsigned unless written with a '-', and a value in a message is
// nlohmann's dump of it.
class JsonReader {
 public:
  JsonReader(const JsonDocument& doc, std::string_view text) : doc_(doc), text_(text) {}

  [[noreturn]] void fail(const JsonValue& v, const std::string& field, const std::string& message) const {
    throw InputError(doc_.where(v), field, message);
  }

  // "a string", "-3", "{...}": what a value is, for messages: nlohmann's dump of it (members in key order,
  // a repeated key at its last occurrence), cut to 37 characters and "..." past 40. Made without recursion
  // and only as far as is shown: a value nested 100,000 deep, or of megabytes, costs no more than its start.
  [[nodiscard]] std::string got(const JsonValue& v) const {
    constexpr std::size_t kShown = 40;
    struct Frame {
      const JsonValue* container;
      std::vector<std::pair<std::string_view, std::uint32_t>> members;  // objects: (key, item), in order
      std::uint32_t next = 0;
    };
    std::vector<Frame> stack;
    std::string text;
    const auto open = [&](const JsonValue& x) {
      if (x.kind == JsonValue::Kind::array) {
        text += '[';
        stack.push_back({&x, {}, 0});
      } else if (x.kind == JsonValue::Kind::object) {
        text += '{';
        Frame f{&x, {}, 0};
        for (std::uint32_t i = 0; i < x.count; ++i) f.members.emplace_back(doc_.key(x, i), i);
        // Key order; of equal keys the last (stable sort keeps them in file order; the others go).
        std::stable_sort(f.members.begin(), f.members.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<std::pair<std::string_view, std::uint32_t>> last;
        for (std::size_t i = 0; i < f.members.size(); ++i)
          if (i + 1 == f.members.size() || f.members[i + 1].first != f.members[i].first)
            last.push_back(f.members[i]);
        f.members.swap(last);
        stack.push_back(std::move(f));
      } else {
        text += to_json(x).dump();
      }
    };
    open(v);
    while (!stack.empty() && text.size() <= kShown) {
      Frame& f = stack.back();
      const bool object = f.container->kind == JsonValue::Kind::object;
      const std::size_t n = object ? f.members.size() : f.container->count;
      if (f.next == n) {
        text += object ? '}' : ']';
        stack.pop_back();
        continue;
      }
      if (f.next > 0) text += ',';
      const std::uint32_t i = object ? f.members[f.next].second : f.next;
      if (object) (text += nlohmann::json(std::string(f.members[f.next].first)).dump()) += ':';
      ++f.next;
      open(doc_.item(*f.container, i));  // may push: f is not used after this
    }
    if (text.size() > kShown) text = text.substr(0, 37) + "...";
    return text;
  }

  // The member `key` (its last occurrence, as nlohmann keeps it), or nullptr.
  [[nodiscard]] const JsonValue* find(const JsonValue& object, std::string_view key) const {
    const JsonValue* found = nullptr;
    for (std::uint32_t i = 0; i < object.count; ++i)
      if (doc_.key(object, i) == key) found = &doc_.item(object, i);
    return found;
  }

  // A missing member is reported at the object that lacks it.
  const JsonValue& get(const JsonValue& object, const std::string& key, const std::string& path) const {
    const JsonValue* v = find(object, key);
    if (v == nullptr) fail(object, path.empty() ? key : path + "." + key, "missing");
    return *v;
  }

  std::string string(const JsonValue& v, const std::string& field) const {
    if (v.kind != JsonValue::Kind::string) fail(v, field, "expected a string, got " + got(v));
    return std::string(doc_.text(v));
  }

  std::int64_t integer(const JsonValue& v, const std::string& field, std::int64_t lo, std::int64_t hi) const {
    bool ok = false;
    std::int64_t x = 0;
    if (is_unsigned(v)) {
      const std::uint64_t u = unsigned_value(v);
      ok = u <= static_cast<std::uint64_t>(hi);
      x = ok ? static_cast<std::int64_t>(u) : 0;
    } else if (v.kind == JsonValue::Kind::number && v.integer) {
      x = signed_value(v);
      ok = x >= lo && x <= hi;
    } else {
      fail(v, field, "expected an integer, got " + got(v));
    }
    if (!ok || x < lo)
      fail(
          v, field,
          "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + got(v));
    return x;
  }

  std::uint64_t unsigned64(const JsonValue& v, const std::string& field) const {
    if (!is_unsigned(v)) fail(v, field, "expected an integer from 0 to 18446744073709551615, got " + got(v));
    return unsigned_value(v);
  }

  std::uint32_t u32(const JsonValue& v, const std::string& field) const {
    return static_cast<std::uint32_t>(integer(v, field, 0, std::numeric_limits<std::uint32_t>::max()));
  }

  Duration time(const JsonValue& v, const std::string& field) const {
    return Duration::from_ns(integer(v, field, -1, std::numeric_limits<std::int64_t>::max()));
  }
  Duration span(const JsonValue& v, const std::string& field) const {
    return Duration::from_ns(integer(v, field, 0, std::numeric_limits<std::int64_t>::max()));
  }

  double number(const JsonValue& v, const std::string& field) const {
    if (v.kind != JsonValue::Kind::number) fail(v, field, "expected a number, got " + got(v));
    return v.number;
  }

  // A field of an object by key, named in errors as `path.key` (`key` at the top level).
  double number_at(const JsonValue& object, const std::string& key, const std::string& path) const {
    return number(get(object, key, path), path.empty() ? key : path + "." + key);
  }
  std::uint64_t unsigned64_at(const JsonValue& object, const std::string& key,
                              const std::string& path) const {
    return unsigned64(get(object, key, path), path.empty() ? key : path + "." + key);
  }

  const JsonValue& array(const JsonValue& v, const std::string& field) const {
    if (v.kind != JsonValue::Kind::array) fail(v, field, "expected a list, got " + got(v));
    return v;
  }
  const JsonValue& object(const JsonValue& v, const std::string& field) const {
    if (v.kind != JsonValue::Kind::object) fail(v, field, "expected an object, got " + got(v));
    return v;
  }
  [[nodiscard]] const JsonValue& item(const JsonValue& v, std::uint32_t i) const { return doc_.item(v, i); }

  /// An optional member of an object (absent or null: nullptr).
  [[nodiscard]] const JsonValue* optional(const JsonValue& object, std::string_view key) const {
    const JsonValue* v = find(object, key);
    return v != nullptr && v->kind != JsonValue::Kind::null ? v : nullptr;
  }
  /// A list of strings, each bad element named field[i].
  [[nodiscard]] std::vector<std::string> strings(const JsonValue& v, const std::string& field) const {
    array(v, field);
    std::vector<std::string> out;
    out.reserve(v.count);
    for (std::uint32_t i = 0; i < v.count; ++i)
      out.push_back(string(item(v, i), field + "[" + std::to_string(i) + "]"));
    return out;
  }
  /// true or false.
  [[nodiscard]] bool boolean(const JsonValue& v, const std::string& field) const {
    if (v.kind != JsonValue::Kind::boolean) fail(v, field, "expected true or false, got " + got(v));
    return v.flag;
  }
  /// A number at least 0.
  [[nodiscard]] double non_negative(const JsonValue& v, const std::string& field) const {
    const double x = number(v, field);
    if (x < 0) fail(v, field, "must be at least 0, got " + got(v));
    return x;
  }

 private:
  // An integer the document holds exactly is read again from its text (its double may round).
  [[nodiscard]] bool is_unsigned(const JsonValue& v) const {
    return v.kind == JsonValue::Kind::number && v.integer && text_[v.offset] != '-';
  }
  [[nodiscard]] std::uint64_t unsigned_value(const JsonValue& v) const {
    std::uint64_t u = 0;
    std::from_chars(text_.data() + v.offset, text_.data() + text_.size(), u);
    return u;
  }
  [[nodiscard]] std::int64_t signed_value(const JsonValue& v) const {
    std::int64_t x = 0;
    std::from_chars(text_.data() + v.offset, text_.data() + text_.size(), x);
    return x;
  }
  // A scalar as nlohmann reads it (for a message only; got() walks arrays and objects itself).
  [[nodiscard]] nlohmann::json to_json(const JsonValue& v) const {
    switch (v.kind) {
      case JsonValue::Kind::null:
        return nlohmann::json(nullptr);
      case JsonValue::Kind::boolean:
        return nlohmann::json(v.flag);
      case JsonValue::Kind::string:
        return nlohmann::json(std::string(doc_.text(v)));
      case JsonValue::Kind::number:
        if (is_unsigned(v)) return nlohmann::json(unsigned_value(v));
        if (v.integer) return nlohmann::json(signed_value(v));
        return nlohmann::json(v.number);
      case JsonValue::Kind::array:
      case JsonValue::Kind::object:
        break;
    }
    return nlohmann::json();
  }

  const JsonDocument& doc_;
  std::string_view text_;
};

/// All of `in` (an InputError "cannot read the <kind>" if reading fails).
std::string read_json_input(std::istream& in, const std::string& file, const char* kind);

/// `text` as a JsonDocument; bad JSON is an InputError with nlohmann's syntax message at file:line:col
/// (the reader accepts exactly what nlohmann's parser accepts).
JsonDocument parse_json_input(const std::string& text, const std::string& file);

}  // namespace shardflow
