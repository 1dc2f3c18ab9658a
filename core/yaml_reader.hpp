// The scenario loader's YAML reading, shared by its parts (core/pipeline_reader.cpp, cluster_reader.cpp,
// overrides.cpp) and by other readers of YAML files with the same kind of messages (k8s/kubeconfig.cpp):
// a Reader that knows the file:line:col of every node (and the place a --set, an overlay or a preset
// stands for), a Map checked for duplicate and unknown keys, typed getters whose errors name the field,
// and parsing one YAML document. Private: not under include/ (shardflow::core_private reaches it).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/core/units.hpp>

namespace shardflow::detail {

using Keys = std::span<const std::string_view>;

/// What a value is, for a message: "got nothing (null)", "got \"x\"", "got a list", "got a mapping".
std::string got(const YAML::Node& n);
/// The same without a scalar's text ("got a string"): for values that may be secrets (kubeconfigs).
std::string got_kind(const YAML::Node& n);
/// After "expected a mapping, got ...": for a plain value where a step's `duration`, `parallel_for`,
/// `failure`, `retries` or `resources` mapping belongs, how to write it (" (write duration: {base: 10s})");
/// else "".
std::string mapping_hint(const std::string& path, const YAML::Node& n);
/// "a, b, c" (with sep ", ").
std::string join(std::span<const std::string> names, std::string_view sep = ", ");
/// A field's path: "cluster" + "scheduler" -> "cluster.scheduler"; "" + "name" -> "name". A key of more
/// than 100 characters is shortened (shortened() in shardflow/core/text.hpp): paths are for messages.
std::string key_path(const std::string& parent, std::string_view key);
/// "pipeline.steps" + 2 -> "pipeline.steps[2]".
std::string index_path(const std::string& parent, std::size_t i);
/// " (first at line 3)", for a name given twice; " (twice in this value)" when the first is in a --set's
/// value (line 0, the flag's place).
std::string first_at(int line);
/// `text` with each CR that is not followed by LF made an LF, if it has one: YAML 1.2 breaks lines at a
/// lone CR too (classic Mac OS files), yaml-cpp does not. Same length, so places are the same.
std::optional<std::string> lone_cr_as_lf(std::string_view text);
/// "duplicate key "name" (first at line 3)": a key given twice in one mapping (or JSON object).
std::string duplicate_key_message(std::string_view name, int first_line);
/// A yaml-cpp mark as file:line:col (1-based); file:0:0 when the mark is unknown. The column counts
/// characters (see mark_column).
SourceLocation location_of(const YAML::Mark& m, const std::string& file);
/// The 1-based column in characters of a yaml-cpp mark in `file` (yaml-cpp counts bytes): a line with
/// "é" before the place counts it once, as an editor does. Known for the texts check_utf8_text saw on
/// this thread (every file a reader parses); the byte column for others (a --set's value).
int mark_column(const YAML::Mark& m, const std::string& file);
/// Notes the text of `file` for mark_column (check_utf8_text does, for the files it checks).
void note_text_columns(std::string_view text, const std::string& file);

/// A file's text must be UTF-8 (with or without a byte order mark): one that starts with a UTF-16 or UTF-32
/// byte order mark, or has a NUL byte (as UTF-16 text without one has), is an InputError naming the file.
void check_utf8_text(std::string_view text, const std::string& file);

/// A quoted string (\"...\" or '...') of a YAML text that runs over more than one line: the byte offsets
/// of its opening quote and of its closing one (npos when none closes it). YAML lets a quoted string span
/// lines, so a missing closing quote takes in the lines after it, up to the next quote or the end.
struct QuotedSpan {
  std::size_t open = 0;
  std::size_t close = 0;
};
/// The quoted strings of `text` that span lines, in order. A scan of the text, not a parse: a quote opens
/// a string where a value can start (a line's start, after `: `, `- `, `[`, `{`, `,` or `? `); comments
/// and block scalars (`|`, `>`) are passed over.
std::vector<QuotedSpan> multi_line_quotes(std::string_view text);
/// An InputError at a quoted string of `text` that spans lines and takes in a line that reads as a key
/// of the document (`name: x`, `- name: x`) indented no deeper than the line the string opens on: the
/// sign of a missing closing quote (the keys it swallowed would otherwise be reported missing or
/// unknown, far from the cause). For scenario and overlay files, where no value spans such lines.
void check_quotes_closed(std::string_view text, const std::string& file);
/// An InputError at a quoted string of `text` that no quote closes (yaml-cpp reads it to the end of the
/// text: a file cut short in its last value). The message never shows the string's text.
void check_last_quote_closed(std::string_view text, const std::string& file);

/// One YAML document from `text`; a syntax error or a second document is an InputError at file:line:col.
YAML::Node parse_document(const std::string& text, const std::string& file);
/// The same, of at most `max_values` values (nodes other than a mapping's keys; an alias is not one):
/// std::nullopt as soon as the parser meets one more, without reading the rest.
std::optional<YAML::Node> parse_document(const std::string& text, const std::string& file,
                                         std::size_t max_values);

/// A new node of `type` (a Map or a Sequence) in the memory of the tree `in` belongs to. yaml-cpp keeps a
/// tree's nodes in a memory object, and putting a node into a container that has another copies the
/// node's whole memory into the container's: a Node(type) has its own, so each one that a tree's nodes
/// went into copied the whole tree (an overlay naming 250 of a scenario's 5,000 steps took 18 s and
/// 860 MB). One made here holds the tree's nodes for nothing.
YAML::Node make_node_beside(const YAML::Node& in, YAML::NodeType::value type);

/// A node's identity as Node::is() compares it (yaml-cpp's node_ref, which a node assigned with `=`
/// shares with the node it was given), or nullptr for a node that has none (a default Node).
const void* node_identity(const YAML::Node& n);

// Facts about nodes (a place, a key's mark), found by the node in constant time: the newest fact added
// for a node that `is` the one asked about (a linear search newest first made a 50,000-task import with
// a --set take 20 s). A node is filed under its identity when the fact is added. One given a new value
// with `=` afterwards takes the value's identity and is no longer found by it; core gives `=` only to
// nodes it has not noted (a mapping's slot for a key) or, in apply_override, to one whose new value it
// notes right after, the newer fact that a search newest first would find anyway.
template <class Fact>
class NodeFacts {
 public:
  void add(const YAML::Node& n, Fact fact) {
    const void* id = node_identity(n);
    if (id == nullptr) return;  // Node::is() is false for such a node: no search can find it
    const auto [it, fresh] = newest_.try_emplace(id, entries_.size());
    entries_.push_back({n, std::move(fact), fresh ? kNone : it->second});
    it->second = entries_.size() - 1;
  }
  [[nodiscard]] const Fact* find(const YAML::Node& n) const {
    const auto it = newest_.find(node_identity(n));
    if (it == newest_.end()) return nullptr;
    // Usually the first entry; older ones of the same identity (a node noted twice, or one whose
    // identity's memory was reused after an `=`) are checked in turn.
    for (std::size_t i = it->second; i != kNone; i = entries_[i].older)
      if (entries_[i].node.is(n)) return &entries_[i].fact;
    return nullptr;
  }
  /// Every fact in the order added: f(node, fact).
  template <class F>
  void for_each(F&& f) const {
    for (const Entry& e : entries_) f(e.node, e.fact);
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  struct Entry {
    YAML::Node node;
    Fact fact;
    std::size_t older;  // the previous entry filed under the same identity, or kNone
  };
  std::vector<Entry> entries_;
  std::unordered_map<const void*, std::size_t> newest_;
};

/// A problem already recorded in another form (collecting only): stops the reading of a part without
/// being reported again.
class AlreadyReported : public InputError {
 public:
  using InputError::InputError;
};

// Reads one scenario document, remembering the file name for every message.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[nodiscard]] SourceLocation at(const YAML::Node& n) const {
    // Newest first: a --set that replaced an overlay's value names the --set.
    if (const SourceLocation* where = overridden_.find(n)) return *where;
    YAML::Mark m = n.Mark();
    if (n.IsNull()) {
      // An empty value's mark is the next token, often on a later line; the key is where the user looks.
      if (const YAML::Mark* key_mark = null_values_.find(n)) m = *key_mark;
    }
    if (m.is_null() || m.line < 0) return SourceLocation{file_, 0, 0};
    return SourceLocation{file_, m.line + 1, mark_column(m, file_)};
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& field, const std::string& message) const {
    throw InputError(at(n), field, message);
  }
  /// fail() for a cluster that cannot run the pipeline (InfeasibleError).
  [[noreturn]] void fail_infeasible(const YAML::Node& n, const std::string& field,
                                    const std::string& message) const {
    throw InfeasibleError(at(n), field, message);
  }

  // Collecting (LoadOptions::problems, for `validate`): a problem that leaves the rest readable is
  // recorded and the reading goes on; otherwise each of these throws as fail() does.
  void collect_into(std::vector<InputError>* problems) { problems_ = problems; }
  /// How many problems have been recorded (0 when not collecting): a part read with no new ones is sound.
  [[nodiscard]] std::size_t problem_count() const { return problems_ ? problems_->size() : 0; }
  /// Records the problem when collecting (the caller then skips what it concerns), else throws it.
  void report(const YAML::Node& n, const std::string& field, const std::string& message) const {
    report(InputError(at(n), field, message));
  }
  /// A problem found away from the nodes (on what was read from them): recorded, or thrown.
  void report(const InputError& e) const {
    if (problems_ == nullptr) throw e;
    problems_->push_back(e);
  }
  /// Runs `read`; when collecting, an InputError it throws is recorded and false returned (the caller
  /// leaves out what `read` was reading), else it propagates.
  template <class F>
  bool attempt(F&& read) const {
    if (problems_ == nullptr) {
      read();
      return true;
    }
    try {
      read();
      return true;
    } catch (const AlreadyReported&) {
      return false;
    } catch (const InputError& e) {
      problems_->push_back(e);
      return false;
    }
  }
  [[nodiscard]] const std::string& file() const { return file_; }
  /// The null values of the mappings read so far, each with its key's mark (Map notes them).
  [[nodiscard]] const NodeFacts<YAML::Mark>& null_values() const { return null_values_; }
  void note_null_value(const YAML::Node& value, const YAML::Mark& key_mark) const {
    null_values_.add(value, key_mark);
  }
  // A node that came from a command-line override, an overlay or a preset: errors about it name that,
  // not the file.
  void note_override(const YAML::Node& n, const SourceLocation& where) const { overridden_.add(n, where); }

 private:
  const std::string& file_;
  std::vector<InputError>* problems_ = nullptr;
  mutable NodeFacts<YAML::Mark> null_values_;
  mutable NodeFacts<SourceLocation> overridden_;
};

// One YAML mapping, checked once for duplicate and unknown keys, then read by key.
class Map {
 public:
  /// How a reader collecting problems (Reader::collect_into) goes on past a bad key: an element (a step, a
  /// node pool, a value's mapping) reports all its bad keys, then is left out, since what the key was
  /// meant to give is missing from it; a section (the top level, `cluster`, `pipeline`) reports them and
  /// is read without them, its other keys being independent of each other. A `read_on` element reports
  /// its bad keys and is read on (its keys' own problems are reported too); the reader leaves it out
  /// after, when bad_keys() is not 0 (Parts does).
  enum class Kind { element, section, read_on };

  Map(const Reader& r, const YAML::Node& node, std::string path, Keys known, Kind kind = Kind::element)
      : r_(r), node_(node), path_(std::move(path)) {
    if (!node.IsMap()) r.fail(node, path_, "expected a mapping, " + got(node) + mapping_hint(path_, node));
    std::size_t bad_keys = 0;  // reported (collecting only: otherwise the first throws)
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node k = it->first;
      // Collecting, a bad key is recorded and left out, and the mapping's other keys are read.
      if (!k.IsScalar()) {
        r.report(k, path_, "a key must be a plain name, " + got(k));
        ++bad_keys;
        continue;
      }
      const std::string& name = k.Scalar();
      if (const auto dup = index_.find(name); dup != index_.end()) {
        r.report(k, key_path(path_, name),
                 duplicate_key_message(name, r.at(entries_[dup->second].key_node).line));
        ++bad_keys;
        continue;
      }
      if (!known.empty() && std::find(known.begin(), known.end(), name) == known.end()) {
        const auto meant = closest_name(name, known);
        r.report(k, key_path(path_, name), unknown_name_message("key", name, known, meant));
        if (meant) misspelled_.emplace_back(*meant);
        ++bad_keys;
        continue;
      }
      if (it->second.IsNull()) r.note_null_value(it->second, k.Mark());
      index_.emplace(name, entries_.size());
      entries_.push_back({name, k, it->second});
    }
    if (bad_keys && kind == Kind::element)
      throw AlreadyReported(r.at(node), path_, "the mapping has keys that were reported");
    bad_keys_ = bad_keys;
  }
  /// Keys reported (collecting): unknown, duplicated, or not plain names.
  [[nodiscard]] std::size_t bad_keys() const { return bad_keys_; }
  /// Whether an unknown key was close to `key` (collecting): what `key` gives is missing, not absent.
  [[nodiscard]] bool misspelled(std::string_view key) const {
    return std::find(misspelled_.begin(), misspelled_.end(), key) != misspelled_.end();
  }

  static std::string unknown_key_message(const std::string& name, Keys known) {
    return unknown_name_message("key", name, known);
  }
  /// "unknown WHAT "name" (did you mean "x"?)", or the list of known names when none is close.
  /// The known name `name` is probably a misspelling of, if one is close enough.
  static std::optional<std::string_view> closest_name(std::string_view name, Keys known) {
    return shardflow::closest_name(name, known);
  }
  static std::string unknown_name_message(std::string_view what, const std::string& name, Keys known) {
    return unknown_name_message(what, name, known, closest_name(name, known));
  }
  /// The same, given closest_name(name, known).
  static std::string unknown_name_message(std::string_view what, const std::string& name, Keys known,
                                          std::optional<std::string_view> best) {
    const std::string head = "unknown " + std::string(what) + " " + quote(name);
    // "duration:{base": a known key with no space after its colon, read as one plain string.
    if (const std::size_t colon = name.find(':');
        colon != std::string::npos && colon > 0 &&
        std::find(known.begin(), known.end(), std::string_view(name).substr(0, colon)) != known.end())
      return head + ": a key needs a space after its colon (" +
             quote(name.substr(0, colon) + ": " + name.substr(colon + 1)) +
             "), else YAML reads the two as one string";
    if (best) return head + " (did you mean \"" + std::string(*best) + "\"?)";
    std::string list;
    for (auto k : known) {
      if (!list.empty()) list += ", ";
      list += k;
    }
    return head + " (expected one of: " + list + ")";
  }

  [[nodiscard]] std::optional<YAML::Node> get(std::string_view key) const {
    const auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    return entries_[it->second].value;
  }
  [[nodiscard]] YAML::Node require(std::string_view key) const {
    if (auto v = get(key)) return *v;
    // Collecting: a key missing because it was misspelled has been reported as unknown already.
    if (std::find(misspelled_.begin(), misspelled_.end(), key) != misspelled_.end())
      throw AlreadyReported(r_.at(node_), path_, "missing required key \"" + std::string(key) + "\"");
    r_.fail(node_, path_, "missing required key \"" + std::string(key) + "\"");
  }
  [[nodiscard]] bool has(std::string_view key) const { return get(key).has_value(); }
  [[nodiscard]] YAML::Node key_node(std::string_view key) const {
    const auto it = index_.find(key);
    return it == index_.end() ? node_ : entries_[it->second].key_node;
  }
  [[nodiscard]] std::string field(std::string_view key) const { return key_path(path_, key); }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const YAML::Node& node() const { return node_; }
  [[nodiscard]] const Reader& reader() const { return r_; }

  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };
  [[nodiscard]] const std::vector<Entry>& entries() const { return entries_; }

 private:
  const Reader& r_;
  YAML::Node node_;
  std::string path_;
  std::vector<Entry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;  // key -> entry; big mappings stay fast
  std::vector<std::string_view> misspelled_;  // collecting: the known keys that unknown ones were close to
  std::size_t bad_keys_ = 0;
};

/// The keys of a value (a `read_on` Map), each read on its own when collecting: a problem in one does not
/// hide the next one's; done() then leaves the whole value out (AlreadyReported) if any had one. Not
/// collecting, the first problem throws, as ever.
class Parts {
 public:
  explicit Parts(const Map& m) : r_(m.reader()), m_(m), ok_(m.bad_keys() == 0) {}
  template <class F>
  bool operator()(F&& read) {
    const bool done = r_.attempt(std::forward<F>(read));
    ok_ = ok_ && done;
    return done;
  }
  [[nodiscard]] bool ok() const { return ok_; }
  void done() const {
    if (!ok_)
      throw AlreadyReported(r_.at(m_.node()), m_.path(), "the mapping has problems that were reported");
  }

 private:
  const Reader& r_;
  const Map& m_;
  bool ok_;
};

/// Every mapping in `n` read as a Map with any keys: a duplicate key or one that is not a plain name is an
/// error naming its path (`path` is n's), and null values are noted in `r`, for files read by other code
/// than Map (an imported PipelineSpec). A node reached again through an alias is not read again.
void check_keys(const Reader& r, const YAML::Node& n, const std::string& path);

// ---- typed getters: each fails at the node, naming `field` ----------------------------------------------

const std::string& scalar(const Reader& r, const YAML::Node& n, const std::string& field,
                          std::string_view what);
std::string get_string(const Reader& r, const YAML::Node& n, const std::string& field);
std::string get_nonempty_string(const Reader& r, const YAML::Node& n, const std::string& field);
std::int64_t get_int(const Reader& r, const YAML::Node& n, const std::string& field, std::int64_t min,
                     std::int64_t max = std::numeric_limits<std::int64_t>::max());
double get_number(const Reader& r, const YAML::Node& n, const std::string& field);
/// A number > min, or >= min when `inclusive`.
double get_number_min(const Reader& r, const YAML::Node& n, const std::string& field, double min,
                      bool inclusive);
double get_probability(const Reader& r, const YAML::Node& n, const std::string& field);
Duration get_duration(const Reader& r, const YAML::Node& n, const std::string& field);
ByteCount get_bytes(const Reader& r, const YAML::Node& n, const std::string& field);
MilliCpu get_cpu(const Reader& r, const YAML::Node& n, const std::string& field);
/// The same, 0 allowed (>= 0).
MilliCpu get_cpu_or_zero(const Reader& r, const YAML::Node& n, const std::string& field);
double get_rate(const Reader& r, const YAML::Node& n, const std::string& field);
/// The YAML 1.2 core schema's booleans; "yes", "on", 1 and the like are rejected rather than guessed.
bool get_bool(const Reader& r, const YAML::Node& n, const std::string& field);
std::map<std::string, std::string> get_string_map(const Reader& r, const YAML::Node& n,
                                                  const std::string& field);
const YAML::Node& expect_list(const Reader& r, const YAML::Node& n, const std::string& field);

}  // namespace shardflow::detail
