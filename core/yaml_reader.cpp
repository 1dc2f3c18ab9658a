#include "yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/node/detail/memory.h>
#include <yaml-cpp/node/detail/node.h>

#include <shardflow/core/text.hpp>

namespace shardflow::detail {

using YAML::Node;

namespace {
// Where in `line` a key runs into its value with no space after the colon ("overheads:none", "- base:5s"),
// which YAML reads as one plain string: the colon's offset, or npos.
std::size_t key_without_space(std::string_view line) {
  std::size_t i = line.find_first_not_of(' ');
  if (i != std::string_view::npos && line.substr(i).starts_with("- ")) i = line.find_first_not_of(' ', i + 1);
  if (i == std::string_view::npos || !(std::isalpha(static_cast<unsigned char>(line[i])) || line[i] == '_'))
    return std::string_view::npos;
  while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' ||
                             line[i] == '-' || line[i] == '.'))
    ++i;
  if (i + 1 >= line.size() || line[i] != ':') return std::string_view::npos;
  const char next = line[i + 1];
  return next == ' ' || next == '\t' || next == '\r' || next == ':' || next == '/' ? std::string_view::npos
                                                                                   : i;
}
}  // namespace

std::string got(const Node& n) {
  if (!n.IsScalar()) return got_kind(n);
  // A plain "base:5s" where a mapping or a number belongs: the space after the colon is missing.
  const std::string& v = n.Scalar();
  if (n.Tag() == "?" && v.find('\n') == std::string::npos)
    if (const std::size_t colon = key_without_space(v); colon != std::string::npos)
      return "got " + quote(v) + " (a key needs a space after its colon: " +
             quote(v.substr(0, colon + 1) + " " + v.substr(colon + 1)) + ")";
  return "got " + quote(v);
}

std::string mapping_hint(const std::string& path, const Node& n) {
  if (!n.IsScalar() || n.Tag() != "?") return "";
  const std::string& v = n.Scalar();
  if (v.empty() || v.find_first_of(":{}[],\n") != std::string::npos) return "";
  const std::size_t dot = path.rfind('.');
  const std::string key = dot == std::string::npos ? path : path.substr(dot + 1);
  const bool digits = v.find_first_not_of("0123456789") == std::string::npos;
  const bool number = v.find_first_not_of("0123456789.eE+-") == std::string::npos;
  std::string example;
  if (key == "duration")
    example = "{base: " + (number ? v + "s" : v) + "}";  // a bare number: seconds, said with the unit
  else if (key == "parallel_for" && digits)
    example = "{count: " + v + "}";
  else if (key == "failure" && number)
    example = "{p: " + v + "}";
  else if (key == "retries" && digits)
    example = "{max: " + v + "}";
  else if (key == "resources" && number)
    example = "{cpu: " + v + "}";
  return example.empty() ? "" : " (write " + key + ": " + example + ")";
}

std::string got_kind(const Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return "got nothing (null)";
    case YAML::NodeType::Scalar:
      return "got a string";
    case YAML::NodeType::Sequence:
      return "got a list";
    case YAML::NodeType::Map:
      return "got a mapping";
    case YAML::NodeType::Undefined:
      break;
  }
  return "got nothing";
}

std::string join(std::span<const std::string> names, std::string_view sep) {
  std::string out;
  for (const auto& s : names) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string key_path(const std::string& parent, std::string_view key) {
  // A path is for messages: a key of 1,000 characters (a KFP task's name) is shortened in it.
  return parent.empty() ? shortened(key) : parent + "." + shortened(key);
}
std::string index_path(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

std::optional<std::string> lone_cr_as_lf(std::string_view text) {
  std::size_t cr = text.find('\r');
  while (cr != std::string_view::npos && cr + 1 < text.size() && text[cr + 1] == '\n')
    cr = text.find('\r', cr + 1);
  if (cr == std::string_view::npos) return std::nullopt;
  std::string out(text);
  for (std::size_t i = cr; i < out.size(); ++i)
    if (out[i] == '\r' && (i + 1 == out.size() || out[i + 1] != '\n')) out[i] = '\n';
  return out;
}

std::string first_at(int line) {
  // Line 0: a --set's value (its place is the flag): "first" needs no line there.
  return line > 0 ? " (first at line " + std::to_string(line) + ")" : " (twice in this value)";
}

std::string duplicate_key_message(std::string_view name, int first_line) {
  return "duplicate key " + quote(name) + first_at(first_line);
}

namespace {
// Per thread, the texts note_text_columns saw last by file, those with characters of more than one byte
// (without a byte order mark, as yaml-cpp counts): mark_column counts characters in them. Loads run on
// several threads at once (a sweep's), each checking its own text first.
struct WideText {
  std::string text;
  ColumnIndex columns;
};
thread_local std::unordered_map<std::string, WideText> t_wide_texts;
}  // namespace

void note_text_columns(std::string_view text, const std::string& file) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a byte order mark: yaml-cpp skips it
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return (static_cast<unsigned char>(c) & 0x80) == 0; })) {
    if (!t_wide_texts.empty()) t_wide_texts.erase(file);
    return;
  }
  t_wide_texts[file] = WideText{std::string(text), ColumnIndex{}};
}

namespace {

// Byte `at` of `text` as file:line:col (1-based; the column in characters, as mark_column counts).
SourceLocation location_at(std::string_view text, std::size_t at, const std::string& file) {
  const std::string_view before = text.substr(0, at);
  const std::size_t line_start = before.rfind('\n');
  const auto line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
  return SourceLocation{
      file, line, character_column(text, line_start == std::string_view::npos ? 0 : line_start + 1, at)};
}

}  // namespace

void check_utf8_text(std::string_view text, const std::string& file) {
  // yaml-cpp would decode UTF-16 and UTF-32, JSON readers do not; shardflow passes a file's text on as it
  // is (a sweep's ConfigMap), and reads only UTF-8.
  static constexpr std::pair<std::string_view, std::string_view> kMarks[] = {
      {std::string_view("\xFF\xFE\0\0", 4), "UTF-32 (its byte order mark is FF FE 00 00)"},
      {std::string_view("\0\0\xFE\xFF", 4), "UTF-32 (its byte order mark is 00 00 FE FF)"},
      {"\xFF\xFE", "UTF-16 (its byte order mark is FF FE)"},
      {"\xFE\xFF", "UTF-16 (its byte order mark is FE FF)"}};
  for (const auto& [mark, what] : kMarks)
    if (text.substr(0, mark.size()) == mark)
      throw InputError(SourceLocation{file, 0, 0}, "",
                       "the file is " + std::string(what) + "; save it as UTF-8");
  const auto place = [&](std::size_t at) { return location_at(text, at, file); };
  const std::size_t nul = text.find('\0');
  if (nul != std::string_view::npos)
    throw InputError(place(nul), "", "the file has a NUL byte (is it UTF-16?); save it as UTF-8");
  // Every byte sequence UTF-8 (names end up in JSON outputs, which hold nothing else): the first one
  // that is not, at its line and column.
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = utf8_length(text, i);
    if (len == 0) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto c = static_cast<unsigned char>(text[i]);
      throw InputError(place(i), "",
                       std::string("the file is not UTF-8 text here (byte 0x") + kHex[c >> 4] + kHex[c & 15] +
                           "; Latin-1?); save it as UTF-8");
    }
    i += len;
  }
  note_text_columns(text, file);
}

int mark_column(const YAML::Mark& m, const std::string& file) {
  if (t_wide_texts.empty() || m.pos < m.column) return m.column + 1;
  const auto f = t_wide_texts.find(file);
  if (f == t_wide_texts.end()) return m.column + 1;
  const auto at = static_cast<std::size_t>(m.pos);
  return f->second.columns.column(f->second.text, at - static_cast<std::size_t>(m.column), at);
}

SourceLocation location_of(const YAML::Mark& m, const std::string& file) {
  if (m.is_null() || m.line < 0) return SourceLocation{file, 0, 0};
  return SourceLocation{file, m.line + 1, mark_column(m, file)};
}

namespace {

// Records where each document starts; the events themselves are not needed.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
  }
  void OnMapEnd() override {}
  std::vector<YAML::Mark> starts;
};

// Whether the text from `pos` on holds no document: only blank lines, comments and the markers "---" and
// "..." (a file that ends with "---", as many YAML writers end each document, has an empty second one).
bool only_empty_documents(const std::string& text, std::size_t pos) {
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.remove_suffix(1);
    for (const std::string_view marker : {std::string_view("---"), std::string_view("...")})
      if (line.starts_with(marker) && (line.size() == 3 || line[3] == ' ' || line[3] == '\t')) {
        line.remove_prefix(3);
        break;
      }
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (!line.empty() && line.front() != '#') return false;
    pos = end + 1;
  }
  return true;
}

// A scenario is one YAML document. yaml-cpp's parser does not consume a stray flow token such as ","
// or "}" at the top level: it reports an empty document and then "another document" at the same place
// forever (YAML::LoadAll never returns, YAML::Load returns null). So we look at no more than three
// document starts and call a start that does not move a syntax error. `docs` holds the starts already
// seen (the first document's, when the caller has parsed it from the same parser).
void check_no_more_documents(YAML::Parser& parser, DocumentStarts& docs, const std::string& text,
                             const std::string& file) {
  while (docs.starts.size() < 3 && parser.HandleNextDocument(docs)) {
    const auto n = docs.starts.size();
    if (n >= 2 && docs.starts[n - 1].pos == docs.starts[n - 2].pos) {
      const YAML::Mark& m = docs.starts.back();
      const std::string what = m.pos >= 0 && static_cast<std::size_t>(m.pos) < text.size()
                                   ? quote(text.substr(static_cast<std::size_t>(m.pos), 1))
                                   : "text";
      throw InputError(location_of(m, file), "", "YAML syntax error: unexpected " + what);
    }
  }
  if (docs.starts.size() > 1 && !(docs.starts[1].pos >= 0 &&
                                  only_empty_documents(text, static_cast<std::size_t>(docs.starts[1].pos)))) {
    // The kfp SDK writes kfp-kubernetes settings as a second document: `platforms:` first.
    std::size_t line = static_cast<std::size_t>(std::max<std::int64_t>(0, docs.starts[1].pos));
    bool platforms = false;
    while (line < text.size()) {  // its first line that is not `---`, blank or a comment
      const std::size_t end = std::min(text.find('\n', line), text.size());
      const std::size_t first = text.find_first_not_of(" \t\r", line);
      if (first < end && text.compare(first, 3, "---") != 0 && text[first] != '#') {
        platforms = text.compare(first, 10, "platforms:") == 0;
        break;
      }
      line = end + 1;
    }
    throw InputError(location_of(docs.starts[1], file), "",
                     platforms
                         ? "expected one YAML document, found more than one: this one, `platforms:`, is "
                           "the kfp-kubernetes settings of a compiled pipeline (node selectors, volumes, "
                           "...), which shardflow does not support (docs/kfp-import.md); remove it, and "
                           "model a node selector in the overlay"
                         : "expected one YAML document, found more than one");
  }
}

}  // namespace
}  // namespace shardflow::detail

// yaml-cpp builds its tree from the parser's events in a private class (src/nodebuilder.h), and the
// Node constructor that wraps one of its detail::node objects is private; Node befriends every
// specialization of YAML::as_if, so these, for types of ours, are the one place that reaches it (and a
// Node's node, whose identity Node::is() compares, and memory: node_identity(), make_node_beside()). The
// detail::node calls (create_node, set_mark, set_tag, set_type, insert, push_back, ref) are yaml-cpp's
// installed headers (yaml-cpp/node/detail/).
namespace shardflow::detail {
namespace {
struct TreeBuilderAccess {};  // no other file can name them, so no other file's as_if can be these
struct NodeAccess {};
}  // namespace
}  // namespace shardflow::detail

template <>
struct YAML::as_if<shardflow::detail::TreeBuilderAccess, shardflow::detail::TreeBuilderAccess> {
  static YAML::Node wrap(YAML::detail::node& n, YAML::detail::shared_memory_holder memory) {
    return YAML::Node(n, std::move(memory));
  }
};

template <>
struct YAML::as_if<shardflow::detail::NodeAccess, shardflow::detail::NodeAccess> {
  static const void* identity(const YAML::Node& n) {
    return n.m_isValid && n.m_pNode != nullptr ? n.m_pNode->ref() : nullptr;
  }
  static YAML::Node make_beside(const YAML::Node& in, YAML::NodeType::value type) {
    if (!in.m_isValid || in.m_pMemory == nullptr) return YAML::Node(type);
    YAML::detail::node& n = in.m_pMemory->create_node();  // what Node(type) does, in `in`'s memory
    n.set_type(type);
    return YAML::Node(n, in.m_pMemory);
  }
};

namespace shardflow::detail {

const void* node_identity(const YAML::Node& n) {
  return YAML::as_if<NodeAccess, NodeAccess>::identity(n);
}

YAML::Node make_node_beside(const YAML::Node& in, YAML::NodeType::value type) {
  return YAML::as_if<NodeAccess, NodeAccess>::make_beside(in, type);
}

namespace {

// The tree of one document, built from the parser's events as YAML::Load builds it: every node made
// once (an alias is the anchored node itself), with its mark, tag and style; a mapping's pairs in file
// order, duplicate keys kept (Map reports them).
class TreeBuilder : public YAML::EventHandler {
 public:
  /// Thrown by the builder at the value past `max_values`.
  struct TooManyValues {};

  explicit TreeBuilder(std::size_t max_values = std::numeric_limits<std::size_t>::max())
      : memory_(std::make_shared<YAML::detail::memory_holder>()), max_values_(max_values) {
    anchors_.push_back(nullptr);  // the parser numbers anchors from 1
  }

  /// The document's root; a null Node when the document had no node.
  [[nodiscard]] YAML::Node root() const {
    if (root_ == nullptr) return YAML::Node();
    return YAML::as_if<TreeBuilderAccess, TreeBuilderAccess>::wrap(*root_, memory_);
  }

  DocumentStarts starts;  // the first document's start, for the check that no other follows

  void OnDocumentStart(const YAML::Mark& mark) override { starts.starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YAML::detail::node& n = make(mark, anchor);
    n.set_null();
    add(n);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override { add(*anchors_.at(anchor)); }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    YAML::detail::node& n = make(mark, anchor);
    n.set_scalar(value);
    n.set_tag(tag);
    add(n);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, style, YAML::NodeType::Sequence);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    open(mark, tag, anchor, style, YAML::NodeType::Map);
  }
  void OnMapEnd() override { close(); }

 private:
  // An open collection; for a mapping, its key that waits for its value.
  struct Open {
    YAML::detail::node* node;
    YAML::detail::node* key;
  };

  YAML::detail::node& make(const YAML::Mark& mark, YAML::anchor_t anchor) {
    const bool key =
        !stack_.empty() && stack_.back().node->type() == YAML::NodeType::Map && stack_.back().key == nullptr;
    if (!key && ++values_ > max_values_) throw TooManyValues{};
    YAML::detail::node& n = memory_->create_node();
    n.set_mark(mark);
    if (anchor != YAML::NullAnchor) {
      if (anchor >= anchors_.size()) anchors_.resize(anchor + 1, nullptr);
      anchors_[anchor] = &n;
    }
    return n;
  }
  void open(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
            YAML::EmitterStyle::value style, YAML::NodeType::value type) {
    YAML::detail::node& n = make(mark, anchor);
    n.set_type(type);
    n.set_tag(tag);
    n.set_style(style);
    stack_.push_back({&n, nullptr});
  }
  void close() {
    YAML::detail::node& n = *stack_.back().node;
    stack_.pop_back();
    add(n);
  }
  // A finished node goes into the collection that is open, or is the root.
  void add(YAML::detail::node& n) {
    if (stack_.empty()) {
      root_ = &n;
      return;
    }
    Open& parent = stack_.back();
    if (parent.node->type() == YAML::NodeType::Sequence) {
      parent.node->push_back(n, memory_);
    } else if (parent.key == nullptr) {
      parent.key = &n;
    } else {
      parent.node->insert(*parent.key, n, memory_);
      parent.key = nullptr;
    }
  }

  YAML::detail::shared_memory_holder memory_;
  std::vector<YAML::detail::node*> anchors_;
  std::vector<Open> stack_;
  YAML::detail::node* root_ = nullptr;
  std::size_t max_values_;
  std::size_t values_ = 0;
};

}  // namespace

namespace {

// The closing quote of the quoted scalar that opens at text[open] ("..." with backslash escapes, '...'
// with '' for a quote), or text.size() if it is never closed.
std::size_t closing_quote(std::string_view text, std::size_t open) {
  const char q = text[open];
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (q == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == q) {
      if (q != '\'' || i + 1 >= text.size() || text[i + 1] != '\'') return i;
      ++i;
    }
  }
  return text.size();
}

// At least how many values a document that is a flow collection ([...] or {...}, as JSON is) has, from its
// commas, counted up to `stop`: every comma inside the collection, outside a quoted scalar and a comment,
// follows an entry and so a value (a mapping entry's value, null if not given), and the collection is one
// more. yaml-cpp reads a whole flow collection into tokens before the first event (it could be a
// mapping's key), so the builder's count would only stop after that.
std::size_t flow_values_at_least(std::string_view text, std::size_t stop) {
  std::size_t i = text.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos || (text[i] != '[' && text[i] != '{')) return 0;
  std::size_t values = 1, depth = 0;
  bool boundary = true;  // a scalar may start here: after an indicator or a blank
  for (; i < text.size() && values < stop; ++i) {
    const char c = text[i];
    if (boundary && (c == '"' || c == '\'')) {
      i = closing_quote(text, i);
      boundary = false;
      continue;
    }
    if (boundary && c == '#') {  // a comment, to the end of the line
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == ',') ++values;
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && --depth == 0) break;  // the end of the document's collection
    boundary =
        c == ',' || c == '[' || c == '{' || c == ':' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
  }
  return values;
}

// The first opening bracket of the deepest flow collection ([...] or {...}) in the text, and its depth
// in flow collections; npos when the text has none. Quoted scalars and comments are skipped as above; a
// bracket opens a collection inside one, or where a scalar could start (not `a[0]` in a plain scalar).
// For the nesting limit's error: yaml-cpp reads a flow sequence whole before it parses it, and its mark
// is then at the sequence's end, not where the nesting went too deep.
std::pair<std::size_t, std::size_t> deepest_flow_bracket(std::string_view text) {
  std::size_t depth = 0, deepest = 0, at = std::string_view::npos;
  bool boundary = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (boundary && (c == '"' || c == '\'')) {
      i = closing_quote(text, i);
      boundary = false;
      continue;
    }
    if (boundary && c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if ((c == '[' || c == '{') && (boundary || depth > 0) && ++depth > deepest) deepest = depth, at = i;
    if ((c == ']' || c == '}') && depth > 0) --depth;
    boundary =
        c == ',' || c == '[' || c == '{' || c == ':' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
  }
  return {at, deepest};
}

// Byte `pos` of `text` as "line:column" (1-based; the column in characters).
std::string place_of(std::string_view text, std::size_t pos) {
  const SourceLocation l = location_at(text, pos, "");
  return std::to_string(l.line) + ":" + std::to_string(l.column);
}

// "; line 4 is indented with a tab: YAML indents with spaces only" when the line of a syntax error starts
// with a tab among its blanks (yaml-cpp says "illegal block entry" or "end of map not found").
std::string tab_hint(const std::string& text, const YAML::Mark& mark) {
  if (mark.line < 0) return "";
  std::size_t start = 0;
  for (int line = 0; line < mark.line; ++line) {
    start = text.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  for (std::size_t i = start; i < text.size() && (text[i] == ' ' || text[i] == '\t'); ++i)
    if (text[i] == '\t')
      return "; line " + std::to_string(mark.line + 1) +
             " is indented with a tab: YAML indents with spaces only";
  return "";
}

// A syntax error inside or just after a quoted string that spans lines: that string may lack its
// closing quote (the error is then where the next quote ended it).
std::string quote_hint(const std::string& text, const YAML::Mark& mark) {
  if (mark.pos < 0) return "";
  const auto at = static_cast<std::size_t>(mark.pos);
  const int line = mark.line;
  const std::vector<QuotedSpan> spans = multi_line_quotes(text);
  const QuotedSpan* last = nullptr;
  // The spans come in the text's order: their lines are counted on as they come, in one pass.
  std::size_t counted = 0;
  int lines = 0;
  const auto line_at = [&](std::size_t pos) {
    lines += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted),
                                         text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    counted = pos;
    return lines;
  };
  for (const QuotedSpan& q : spans) {
    if (q.open >= at) break;
    const int open_line = line_at(q.open);
    if (open_line < line && (q.close == std::string::npos || line_at(q.close) >= line)) last = &q;
  }
  if (last == nullptr) return "";
  return "; the quoted string opened at " + place_of(text, last->open) +
         (last->close == std::string::npos ? " is never closed"
                                           : " closes only at " + place_of(text, last->close)) +
         " (YAML lets a quoted string span lines): is its closing quote missing?";
}

// yaml-cpp's "invalid unicode: 55357" for an escape that is no Unicode character, said in hex with what
// to write: a \u escape of a UTF-16 surrogate (JSON writes characters above U+FFFF as two; YAML, whose
// \u takes a code point, does not combine them) or a code point past U+10FFFF.
std::string unicode_hint(const std::string& text, const std::string& msg, const YAML::Mark& mark) {
  static constexpr std::string_view kPrefix = "invalid unicode: ";
  if (msg.rfind(kPrefix, 0) != 0) return "";
  char* end = nullptr;
  const unsigned long value = std::strtoul(msg.c_str() + kPrefix.size(), &end, 10);
  if (end == msg.c_str() + kPrefix.size() || *end != '\0') return "";
  char hex[16];
  std::snprintf(hex, sizeof hex, "%lX", value);
  if (value < 0xD800 || value > 0xDFFF)
    return std::string(": U+") + hex + " is past U+10FFFF, the last Unicode code point";
  std::string out =
      std::string(": \\u") + hex +
      " is half of a UTF-16 surrogate pair, as JSON writes a character above U+FFFF; YAML's \\u "
      "takes the character's code point: write ";
  // The pair as written, just before the error's mark: a high surrogate followed by a low one.
  const auto hex_at = [&](std::size_t at) -> long {
    if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
    long v = 0;
    const char* const last = text.data() + at + 6;
    const auto [ptr, ec] = std::from_chars(text.data() + at + 2, last, v, 16);
    return ec == std::errc() && ptr == last ? v : -1;
  };
  if (mark.pos >= 6) {
    const auto at = static_cast<std::size_t>(mark.pos) - 6;
    const long high = hex_at(at), low = hex_at(at + 6);
    if (high == static_cast<long>(value) && high <= 0xDBFF && low >= 0xDC00 && low <= 0xDFFF) {
      char pair[16];
      std::snprintf(pair, sizeof pair, "%08lX", 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00));
      return out + "\\U" + pair + " (\\U and 8 hex digits) or the character itself";
    }
  }
  return out + "\\U and its 8 hex digits, or the character itself";
}

}  // namespace

std::vector<QuotedSpan> multi_line_quotes(std::string_view text) {
  std::vector<QuotedSpan> out;
  const std::size_t n = text.size();
  const auto indent_at = [&](std::size_t line_start) {
    std::size_t i = line_start;
    while (i < n && text[i] == ' ') ++i;
    return i - line_start;
  };
  std::size_t i = 0;
  std::size_t block_indent = std::string_view::npos;  // inside a block scalar: its header line's indent
  while (i < n) {
    const std::size_t line_start = i;
    std::size_t line_end = text.find('\n', i);
    if (line_end == std::string_view::npos) line_end = n;
    const std::size_t indent = indent_at(line_start);
    if (block_indent != std::string_view::npos) {
      const bool blank = indent == line_end - line_start || text[line_start + indent] == '\r';
      if (blank || indent > block_indent) {
        i = line_end + 1;
        continue;
      }
      block_indent = std::string_view::npos;
    }
    char prev = 0;                         // the last character outside quotes on this line, blanks aside
    bool space_after = true;               // a blank (or the line's start) came after prev
    std::size_t content_end = line_start;  // the end of the line's text before a comment
    std::size_t j = line_start;
    while (j < line_end) {
      const char c = text[j];
      if (c == ' ' || c == '\t' || c == '\r') {
        space_after = true;
        ++j;
        continue;
      }
      if (c == '#' && space_after) break;  // a comment
      const bool value_start = prev == 0 || ((prev == ':' || prev == '-' || prev == '?') && space_after) ||
                               prev == '[' || prev == '{' || prev == ',';
      if ((c == '"' || c == '\'') && value_start) {
        std::size_t k = j + 1;
        for (; k < n; ++k) {
          if (c == '"' && text[k] == '\\') {
            ++k;
          } else if (text[k] == c) {
            if (c == '\'' && k + 1 < n && text[k + 1] == '\'') {
              ++k;
              continue;
            }
            break;
          }
        }
        const std::size_t close = k < n ? k : std::string_view::npos;
        // line_end is the first line break after j: past it, the string spans lines. (Not a search for
        // the next break from each quote: a minified JSON of one long line has thousands of strings.)
        const bool spans = close == std::string_view::npos ? line_end < n : close > line_end;
        if (spans) out.push_back({j, close});
        if (close == std::string_view::npos) return out;  // it runs to the end: nothing after it
        if (spans) {
          // Go on from the closing quote, on its line.
          line_end = text.find('\n', close);
          if (line_end == std::string_view::npos) line_end = n;
        }
        j = close + 1;
        prev = c;
        space_after = false;
        content_end = j;
        continue;
      }
      prev = c;
      space_after = false;
      content_end = ++j;
    }
    // A block scalar's header (`key: |`, `- >-`, `|2`): the lines indented deeper than this one are its
    // text, where quotes mean nothing.
    std::string_view content = text.substr(line_start, content_end - line_start);
    while (!content.empty() && (content.back() == ' ' || content.back() == '\t' || content.back() == '\r'))
      content.remove_suffix(1);
    std::size_t h = content.size();
    while (h > 0 && (content[h - 1] == '+' || content[h - 1] == '-' ||
                     (content[h - 1] >= '1' && content[h - 1] <= '9')))
      --h;
    if (h > 0 && (content[h - 1] == '|' || content[h - 1] == '>') && content.size() - h <= 2) {
      const std::string_view before = content.substr(0, h - 1);
      std::size_t b = before.size();
      while (b > 0 && before[b - 1] == ' ') --b;
      if (b == 0 || (b < before.size() && (before[b - 1] == ':' || before[b - 1] == '-'))) {
        // The text is indented deeper than the key (or the `-`) the header belongs to.
        std::size_t key = indent, dash = indent;
        while (key + 1 < before.size() && before[key] == '-' && before[key + 1] == ' ') {
          dash = key++;
          while (key < before.size() && before[key] == ' ') ++key;
        }
        block_indent = key < b ? key : dash;  // `- key: |` -> the key's column; `- |` -> the dash's
      }
    }
    i = line_end + 1;
  }
  return out;
}

void check_last_quote_closed(std::string_view text, const std::string& file) {
  const std::string scan = text.ends_with('\n') ? std::string(text) : std::string(text) + "\n";
  for (const QuotedSpan& q : multi_line_quotes(scan))
    if (q.close == std::string_view::npos)
      throw InputError(location_at(scan, q.open, file), "",
                       "a quoted value that no quote closes: it runs to the end of the file (is the file cut "
                       "short, or its closing quote missing?)");
}

void check_quotes_closed(std::string_view text, const std::string& file) {
  for (const QuotedSpan& q : multi_line_quotes(text)) {
    const std::size_t open_line = text.rfind('\n', q.open);
    const std::size_t open_start = open_line == std::string_view::npos ? 0 : open_line + 1;
    std::size_t open_indent = 0;
    while (open_start + open_indent < text.size() && text[open_start + open_indent] == ' ') ++open_indent;
    const std::size_t end = q.close == std::string_view::npos ? text.size() : q.close;
    for (std::size_t line = text.find('\n', q.open); line != std::string_view::npos && line + 1 < end;
         line = text.find('\n', line + 1)) {
      const std::size_t start = line + 1;
      std::size_t stop = text.find('\n', start);
      if (stop == std::string_view::npos) stop = text.size();
      std::string_view l = text.substr(start, stop - start);
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      std::size_t k = 0;
      while (k < l.size() && l[k] == ' ') ++k;
      if (k > open_indent) continue;
      std::string_view rest = l.substr(k);
      if (rest.starts_with("- ")) rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(' ', 1)));
      std::size_t key = 0;
      while (key < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[key])) || rest[key] == '_' ||
                                   rest[key] == '-' || rest[key] == '.' || rest[key] == '/'))
        ++key;
      if (key == 0 || !(std::isalpha(static_cast<unsigned char>(rest[0])) || rest[0] == '_')) continue;
      if (key == rest.size() || rest[key] != ':' || !(key + 1 == rest.size() || rest[key + 1] == ' '))
        continue;
      throw InputError(
          location_at(text, q.open, file), "",
          "this quoted string " +
              (q.close == std::string_view::npos
                   ? std::string("runs to the end of the file")
                   : "runs on to line " + std::to_string(location_at(text, q.close, file).line)) +
              " (YAML lets a quoted string span lines) and takes in line " +
              std::to_string(location_at(text, start, file).line) + ", " +
              quote(shortened(std::string(l.substr(k)))) +
              ", which reads as a key: is its closing quote missing?");
    }
  }
}

// One parse: the first document is built into a tree while it is parsed, then the same parser looks
// for a second document (YAML::Load after a separate check parsed everything twice).
std::optional<Node> parse_document(const std::string& text, const std::string& file, std::size_t max_values) {
  if (max_values < std::numeric_limits<std::size_t>::max() &&
      flow_values_at_least(text, max_values + 1) > max_values)
    return std::nullopt;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    TreeBuilder tree(max_values);
    if (!parser.HandleNextDocument(tree)) return Node();
    check_no_more_documents(parser, tree.starts, text, file);
    return tree.root();
  } catch (const TreeBuilder::TooManyValues&) {
    return std::nullopt;
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp says "bad file"
    // Where flow collections alone nest past the limit, at the bracket that opens the deepest one (the
    // mark of a flow sequence is its end); block nesting and flow mappings are yaml-cpp's mark.
    const auto [bracket, flow_depth] = deepest_flow_bracket(text);
    const bool flow = flow_depth >= static_cast<std::size_t>(e.depth()) / 2 && bracket < text.size() &&
                      bracket < static_cast<std::size_t>(std::max(0, e.mark.pos));
    throw InputError(flow ? location_at(text, bracket, file) : location_of(e.mark, file), "",
                     "lists and mappings nest too deeply here (more than " + std::to_string(e.depth()) +
                         " levels): no scenario, pipeline or workflow nests so deep");
  } catch (const YAML::Exception& e) {
    // "overheads:none" (no space after the colon) is a plain string, and the next line's key is then the
    // error: said at the line that lacks the space.
    if (e.mark.line >= 0) {
      std::size_t start = 0;
      std::vector<std::size_t> starts;  // the line starts up to the error's line
      for (int line = 0; line <= e.mark.line && start <= text.size(); ++line) {
        starts.push_back(start);
        const std::size_t end = text.find('\n', start);
        if (end == std::string::npos) break;
        start = end + 1;
      }
      for (std::size_t k = starts.size(); k-- > 0 && k + 2 >= starts.size();) {
        const std::size_t end = std::min(text.find('\n', starts[k]), text.size());
        const std::string_view line = std::string_view(text).substr(starts[k], end - starts[k]);
        const std::size_t colon = key_without_space(line);
        if (colon == std::string_view::npos) continue;
        const std::string written(line.substr(line.find_first_not_of(" -")));
        const std::size_t c = colon - line.find_first_not_of(" -");
        throw InputError(location_at(text, starts[k] + colon, file), "",
                         "YAML syntax error (" + e.msg + " at " +
                             place_of(text, static_cast<std::size_t>(e.mark.pos)) +
                             "): a key needs a space after its colon: " + quote(written) +
                             " is one string to YAML; write " +
                             quote(written.substr(0, c + 1) + " " + written.substr(c + 1)));
      }
    }
    throw InputError(location_of(e.mark, file), "",
                     "YAML syntax error: " + e.msg + unicode_hint(text, e.msg, e.mark) +
                         (e.msg.find("tab") == std::string::npos ? tab_hint(text, e.mark) : "") +
                         quote_hint(text, e.mark));
  }
}

Node parse_document(const std::string& text, const std::string& file) {
  return *parse_document(text, file, std::numeric_limits<std::size_t>::max());
}

void check_keys(const Reader& r, const Node& n, const std::string& path) {
  // Containers by their place in the file: an alias is the anchored node, met again at the same place,
  // and is not read twice (aliases of aliases would make the walk exponential, a cycle endless).
  std::set<std::pair<int, int>> seen;
  // Depth first, in the file's order: a node's children go on the stack last first. Node handles are
  // only constructed, never assigned (yaml-cpp's `=` would rewrite the node a handle refers to).
  std::vector<std::pair<Node, std::string>> todo;
  todo.emplace_back(n, path);
  std::vector<Node> items;
  while (!todo.empty()) {
    const std::pair<Node, std::string> next(todo.back());
    todo.pop_back();
    const Node& node = next.first;
    if (!node.IsMap() && !node.IsSequence()) continue;
    const YAML::Mark m = node.Mark();
    if (m.pos >= 0 && !seen.emplace(m.pos, static_cast<int>(node.Type())).second) continue;
    if (node.IsMap()) {
      const Map map(r, node, next.second, {});
      for (auto e = map.entries().rbegin(); e != map.entries().rend(); ++e)
        todo.emplace_back(e->value, map.field(e->key));
    } else {
      items.clear();
      for (const auto& e : node) items.push_back(e);
      for (std::size_t i = items.size(); i-- > 0;) todo.emplace_back(items[i], index_path(next.second, i));
    }
  }
}

const std::string& scalar(const Reader& r, const Node& n, const std::string& field, std::string_view what) {
  if (!n.IsScalar()) r.fail(n, field, "expected " + std::string(what) + ", " + got(n));
  return n.Scalar();
}

std::string get_string(const Reader& r, const Node& n, const std::string& field) {
  return scalar(r, n, field, "a string");
}

std::string get_nonempty_string(const Reader& r, const Node& n, const std::string& field) {
  std::string s = get_string(r, n, field);
  if (s.empty()) r.fail(n, field, "must not be empty");
  return s;
}

std::int64_t get_int(const Reader& r, const Node& n, const std::string& field, std::int64_t min,
                     std::int64_t max) {
  const std::string& s = scalar(r, n, field, "an integer");
  std::string_view v = s;
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  std::int64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || end != v.data() + v.size()) r.fail(n, field, "expected an integer, got " + quote(s));
  if (ec == std::errc::result_out_of_range) r.fail(n, field, "integer " + quote(s) + " is too large");
  if (out < min) r.fail(n, field, "must be >= " + std::to_string(min) + ", got " + s);
  if (out > max) r.fail(n, field, "must be <= " + std::to_string(max) + ", got " + s);
  return out;
}

double get_number(const Reader& r, const Node& n, const std::string& field) {
  const std::string& s = scalar(r, n, field, "a number");
  std::string_view v = s;
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  double out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || end != v.data() + v.size() || ec != std::errc() || !std::isfinite(out))
    r.fail(n, field, "expected a number, got " + quote(s));
  return out;
}

double get_number_min(const Reader& r, const Node& n, const std::string& field, double min, bool inclusive) {
  const double v = get_number(r, n, field);
  if (inclusive ? v < min : v <= min) {
    std::ostringstream m;
    m << "must be " << (inclusive ? ">= " : "> ") << min << ", got " << n.Scalar();
    r.fail(n, field, m.str());
  }
  return v;
}

double get_probability(const Reader& r, const Node& n, const std::string& field) {
  const double v = get_number(r, n, field);
  if (v < 0 || v > 1) r.fail(n, field, "must be a probability between 0 and 1, got " + n.Scalar());
  return v;
}

// A quantity in its text form (a duration, a size, a CPU amount, a rate): the scalar parsed by `parse`,
// whose std::invalid_argument becomes the field's error, then checked against zero (`positive`: > 0,
// else >= 0).
template <class T, class Parse>
T get_quantity(const Reader& r, const Node& n, const std::string& field, std::string_view what, Parse parse,
               bool positive) {
  const std::string& s = scalar(r, n, field, what);
  T v{};
  try {
    v = parse(s);
  } catch (const std::invalid_argument& e) {
    r.fail(n, field, e.what());
  }
  if (positive ? v <= T{} : v < T{})
    r.fail(n, field, (positive ? "must be > 0, got " : "must be >= 0, got ") + s);
  return v;
}

Duration get_duration(const Reader& r, const Node& n, const std::string& field) {
  return get_quantity<Duration>(r, n, field, "a duration", parse_duration, false);
}

ByteCount get_bytes(const Reader& r, const Node& n, const std::string& field) {
  return get_quantity<ByteCount>(r, n, field, "a size", parse_bytes, false);
}

MilliCpu get_cpu(const Reader& r, const Node& n, const std::string& field) {
  return get_quantity<MilliCpu>(r, n, field, "a CPU quantity", parse_cpu, true);
}

MilliCpu get_cpu_or_zero(const Reader& r, const Node& n, const std::string& field) {
  return get_quantity<MilliCpu>(r, n, field, "a CPU quantity", parse_cpu, false);
}

double get_rate(const Reader& r, const Node& n, const std::string& field) {
  return get_quantity<double>(r, n, field, "a rate", parse_rate, false);
}

bool get_bool(const Reader& r, const Node& n, const std::string& field) {
  const std::string& s = scalar(r, n, field, "true or false");
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  r.fail(n, field, "expected true or false, got " + quote(s));
}

std::map<std::string, std::string> get_string_map(const Reader& r, const Node& n, const std::string& field) {
  const Map m(r, n, field, {});
  std::map<std::string, std::string> out;
  for (const auto& e : m.entries()) {
    if (e.key.empty()) r.fail(e.key_node, field, "a key must not be empty");
    out[e.key] = get_string(r, e.value, m.field(e.key));
  }
  return out;
}

const Node& expect_list(const Reader& r, const Node& n, const std::string& field) {
  if (!n.IsSequence()) r.fail(n, field, "expected a list, " + got(n));
  return n;
}

}  // namespace shardflow::detail
