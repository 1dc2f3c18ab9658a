// The positioned JSON reader (core/json_document.cpp): what it accepts, the values it reads, and the exact
// error each kind of bad JSON gets. fuzz/importers_fuzz.cpp checks that it accepts exactly what nlohmann's
// parser accepts.
#include "../../core/json_document.hpp"  // core-private

#include <cmath>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>

using namespace shardflow;

namespace {

std::string error_of(std::string_view text) {
  try {
    (void)parse_json_document(text, "j.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("JsonDocument: values, offsets and decoded strings", "[json]") {
  const std::string text =
      "\xEF\xBB\xBF{\"a\": [1, -2.5e1, true, null],\n \"s\\u00e9\": \"x\\n\\ud83d\\ude00\xC3\xA9\"}";
  const JsonDocument doc = parse_json_document(text, "j.json");
  const JsonValue& root = doc.root();
  REQUIRE(root.kind == JsonValue::Kind::object);
  REQUIRE(root.count == 2);
  CHECK(doc.key(root, 0) == "a");
  CHECK(doc.key_offset(root, 0) == 4);  // after the 3-byte BOM and '{'
  const JsonValue& a = doc.item(root, 0);
  REQUIRE(a.kind == JsonValue::Kind::array);
  REQUIRE(a.count == 4);
  CHECK(doc.item(a, 0).integer);
  CHECK(doc.item(a, 0).number == 1);
  CHECK_FALSE(doc.item(a, 1).integer);
  CHECK(doc.item(a, 1).number == -25);
  CHECK(doc.item(a, 2).flag);
  CHECK(doc.item(a, 3).kind == JsonValue::Kind::null);
  CHECK(doc.where(doc.item(a, 1)).column == 11);  // `{"a": [1, ` (10 characters) before it; the BOM is none
  CHECK(doc.key(root, 1) == "s\xC3\xA9");         // \u00e9 is U+00E9, C3 A9 in UTF-8
  // \ud83d\ude00 is the pair of U+1F600: F0 9F 98 80.
  CHECK(doc.text(doc.item(root, 1)) == "x\n\xF0\x9F\x98\x80\xC3\xA9");
  CHECK(doc.where(doc.item(root, 1)).line == 2);
  // Integers that fit 64 bits are integers; larger ones are doubles, as nlohmann reads them.
  const JsonDocument n = parse_json_document(
      "[18446744073709551615, 18446744073709551616, -9223372036854775808, "
      "-9223372036854775809, 1e-400, -0]",
      "j.json");
  CHECK(n.item(n.root(), 0).integer);
  CHECK_FALSE(n.item(n.root(), 1).integer);
  CHECK(n.item(n.root(), 1).number == 18446744073709551616.0);
  CHECK(n.item(n.root(), 2).integer);
  CHECK(n.item(n.root(), 2).number == -9223372036854775808.0);
  CHECK_FALSE(n.item(n.root(), 3).integer);
  CHECK(n.item(n.root(), 4).number == 0);                 // underflow reads as zero, as strtod does
  CHECK_FALSE(std::signbit(n.item(n.root(), 5).number));  // -0 is the integer 0
  // A NUL byte where a token would start ends the document, as in nlohmann's parser.
  CHECK(parse_json_document(std::string_view("[1]\0junk", 8), "j.json").root().count == 1);
  // Deep nesting costs memory, not stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(parse_json_document(deep, "j.json").size() == 100000);
}

TEST_CASE("JsonDocument: bad JSON gets one error at the offending byte", "[json]") {
  CHECK(error_of("") == "j.json:1:1: invalid JSON: unexpected end of the file; expected a value");
  CHECK(
      error_of("[1,]") ==
      "j.json:1:4: invalid JSON: unexpected ']'; expected a value (an object, an array, a string, a number, "
      "true, false or null)");
  CHECK(error_of("{\"a\" 1}") ==
        "j.json:1:6: invalid JSON: unexpected '1'; expected ':' after a member's name");
  CHECK(error_of("{1: 2}") ==
        "j.json:1:2: invalid JSON: unexpected '1'; expected a member's name (a string in double quotes)");
  CHECK(error_of("[1 2]") ==
        "j.json:1:4: invalid JSON: unexpected '2' after an array's element; expected ',' or ']'");
  CHECK(error_of("{\"a\": 1") ==
        "j.json:1:8: invalid JSON: unexpected end of the file inside an object; expected ',' or '}'");
  CHECK(error_of("1 2") ==
        "j.json:1:3: invalid JSON: unexpected '2' after the document's value; expected the end of the file");
  // Columns count characters: "é" (2 bytes) is one, a BOM none.
  CHECK(error_of("[\"\xc3\xa9\" x]") ==
        "j.json:1:6: invalid JSON: unexpected 'x' after an array's element; expected ',' or ']'");
  CHECK(error_of("\xef\xbb\xbf[1 2]") ==
        "j.json:1:4: invalid JSON: unexpected '2' after an array's element; expected ',' or ']'");
  CHECK(error_of("[tru]") == "j.json:1:5: invalid JSON: invalid literal starting with 't'; expected true");
  CHECK(error_of("\"ab") ==
        "j.json:1:4: invalid JSON: missing closing quote of the string that starts at line 1, column 1");
  CHECK(error_of("\"a\tb\"") ==
        "j.json:1:3: invalid JSON: control character U+0009 inside a string; it must be written as an escape "
        "(\\n, \\t, \\u00XX...)");
  CHECK(error_of("\"\\x\"") ==
        "j.json:1:3: invalid JSON: invalid escape \\x in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t "
        "\\uXXXX)");
  CHECK(error_of("\"\\u12g4\"") ==
        "j.json:1:6: invalid JSON: \\u must be followed by four hexadecimal digits, got 'g'");
  CHECK(error_of("\"\\ud800x\"") ==
        "j.json:1:8: invalid JSON: \\ud800 is a high surrogate; it must be followed by a low surrogate "
        "\\uDC00 to "
        "\\uDFFF");
  CHECK(error_of("\"\\ud800\\u0041\"") ==
        "j.json:1:8: invalid JSON: \\ud800 is a high surrogate; it must be followed by a low surrogate "
        "\\uDC00 to "
        "\\uDFFF, got \\u0041");
  CHECK(error_of("\"\\udc00\"") ==
        "j.json:1:2: invalid JSON: \\udc00 is a low surrogate without a high surrogate before it");
  CHECK(error_of("\"\xC0\xAF\"") ==
        "j.json:1:2: invalid JSON: invalid UTF-8 in a string: byte 0xC0 cannot start a character");
  // U+D800 written in UTF-8 (ED A0 80): a surrogate, not a character.
  CHECK(error_of("\"\xED\xA0\x80\"") ==
        "j.json:1:3: invalid JSON: invalid UTF-8 in a string: byte 0xA0 cannot continue the character that "
        "starts with byte 0xED");
  CHECK(error_of("-") ==
        "j.json:1:2: invalid JSON: invalid number: expected a digit after '-', got the end of the file");
  CHECK(error_of("[01]") ==
        "j.json:1:3: invalid JSON: unexpected '1' after an array's element; expected ',' or ']'");
  CHECK(error_of("1.") ==
        "j.json:1:3: invalid JSON: invalid number: expected a digit after '.', got the end of the file");
  CHECK(
      error_of("1e+") ==
      "j.json:1:4: invalid JSON: invalid number: expected a digit in the exponent, got the end of the file");
  CHECK(error_of("[1e309]") == "j.json:1:2: invalid JSON: number 1e309 is too large for a double (overflow)");
  CHECK(error_of("\xEF\xBB") ==
        "j.json:1:1: invalid JSON: invalid byte order mark (a file may start with EF BB BF, the UTF-8 one)");
}

TEST_CASE("JsonDocument: strings without an escape are the file's bytes, the others decoded", "[json]") {
  const std::string text =
      "{\"plain\": \"caf\xC3\xA9 au lait\", \"k\\\"ey\": \"ab\\ncd\\u0041\", \"2\": [\"x\", \"\\/y\", \"\", "
      "\"tail \\\\\"]}";
  const JsonDocument doc = parse_json_document(text, "s.json");
  const JsonValue& root = doc.root();
  REQUIRE(root.count == 3);
  CHECK(doc.key(root, 0) == "plain");
  CHECK(doc.key(root, 1) == "k\"ey");
  CHECK(doc.key(root, 2) == "2");
  const std::string_view plain = doc.text(doc.item(root, 0));
  CHECK(plain == "caf\xC3\xA9 au lait");
  CHECK(plain.data() == text.data() + 11);  // a view into the text, not a copy
  CHECK(doc.key(root, 0).data() == text.data() + 2);
  CHECK(doc.text(doc.item(root, 1)) == "ab\ncdA");
  const JsonValue& list = doc.item(root, 2);
  REQUIRE(list.count == 4);
  CHECK(doc.text(doc.item(list, 0)) == "x");
  CHECK(doc.text(doc.item(list, 1)) == "/y");
  CHECK(doc.text(doc.item(list, 2)) == "");
  CHECK(doc.text(doc.item(list, 3)) == "tail \\");
  CHECK(doc.member(root, "k\"ey") == &doc.item(root, 1));
}
