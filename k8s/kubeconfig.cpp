#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include <shardflow/core/error.hpp>
#include <shardflow/core/text.hpp>
#include <shardflow/k8s/kubeconfig.hpp>
#include <shardflow/k8s/manifests.hpp>

#include "core/yaml_reader.hpp"

namespace shardflow::k8s {
namespace {

namespace fs = std::filesystem;
using YAML::Node;
using Keys = std::span<const std::string_view>;

// Every key of kubeconfig v1 (k8s.io/client-go/tools/clientcmd/api/v1), so that a typo is an error with a
// suggestion and a key we do not implement is named rather than silently ignored.
constexpr std::string_view kTopKeys[] = {"apiVersion", "kind",     "preferences",     "clusters",
                                         "users",      "contexts", "current-context", "extensions"};
constexpr std::string_view kClusterItemKeys[] = {"name", "cluster", "extensions"};
constexpr std::string_view kUserItemKeys[] = {"name", "user", "extensions"};
constexpr std::string_view kContextItemKeys[] = {"name", "context", "extensions"};
constexpr std::string_view kClusterKeys[] = {"server",
                                             "tls-server-name",
                                             "insecure-skip-tls-verify",
                                             "certificate-authority",
                                             "certificate-authority-data",
                                             "proxy-url",
                                             "disable-compression",
                                             "extensions"};
constexpr std::string_view kUserKeys[] = {"client-certificate",
                                          "client-certificate-data",
                                          "client-key",
                                          "client-key-data",
                                          "token",
                                          "tokenFile",
                                          "as",
                                          "as-uid",
                                          "as-groups",
                                          "as-user-extra",
                                          "username",
                                          "password",
                                          "auth-provider",
                                          "exec",
                                          "extensions"};
constexpr std::string_view kContextKeys[] = {"cluster", "user", "namespace", "extensions"};

// The scenario loader's YAML helpers (core/yaml_reader.hpp), so that a kubeconfig's messages read as a
// scenario file's do.
using detail::got_kind;
using detail::join;
using detail::key_path;

SourceLocation location(const std::string& file, const YAML::Mark& m) {
  return detail::location_of(m, file);
}

// One kubeconfig file.
struct Doc {
  std::string file;
  fs::path dir;  // relative paths inside are resolved against this
  Node root;
};

struct Field {
  Node key;
  Node value;
};

// A key as messages may show it: up to its first ':', '=' or blank (a "client-key-data:LS0t..." key is the
// key data itself), and at most 40 characters.
std::string shown_key(const std::string& name) {
  const std::size_t cut = std::min<std::size_t>(name.find_first_of(":= \t"), 40);
  return cut >= name.size() ? name : name.substr(0, cut) + "...";
}

// One YAML mapping of a kubeconfig, checked for duplicate and unknown keys, read by key.
class Obj {
 public:
  Obj(const Doc& doc, const Node& node, const SourceLocation& where, std::string path, Keys known)
      : doc_(doc), where_(where), path_(std::move(path)) {
    if (!node.IsMap()) throw InputError(where, path_, "expected a mapping, " + got_kind(node));
    for (auto it = node.begin(); it != node.end(); ++it) {
      const Node k = it->first;
      if (!k.IsScalar()) throw InputError(mark(k), path_, "a key must be a plain name, " + got_kind(k));
      const std::string& name = k.Scalar();
      if (const auto dup = fields_.find(name); dup != fields_.end())
        throw InputError(mark(k), key_path(path_, name),
                         "duplicate key " + quote(name) + " (first at line " +
                             std::to_string(mark(dup->second.key).line) + ")");
      if (std::find(known.begin(), known.end(), name) == known.end())
        throw InputError(mark(k), key_path(path_, shown_key(name)),
                         detail::Map::unknown_key_message(shown_key(name), known));
      fields_.emplace(name, Field{k, it->second});
    }
  }

  [[nodiscard]] SourceLocation mark(const Node& n) const { return location(doc_.file, n.Mark()); }
  // Where a key's value is; an empty value's own mark is the next token, so the key's place instead.
  [[nodiscard]] SourceLocation at(const Field& f) const {
    return f.value.IsNull() ? mark(f.key) : mark(f.value);
  }
  [[nodiscard]] const SourceLocation& where() const { return where_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string field(std::string_view key) const { return key_path(path_, key); }
  [[nodiscard]] const Doc& doc() const { return doc_; }

  [[nodiscard]] const Field* get(std::string_view key) const {
    const auto it = fields_.find(key);
    return it == fields_.end() ? nullptr : &it->second;
  }
  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    const Field* f = get(key);
    throw InputError(f ? at(*f) : where_, field(key), message);
  }
  // A string value; "" when absent or empty. A wrong type's message shows no scalar (it is not one).
  [[nodiscard]] std::string string(std::string_view key) const {
    const Field* f = get(key);
    if (!f || f->value.IsNull()) return "";
    if (!f->value.IsScalar())
      throw InputError(at(*f), field(key), "expected a string, " + got_kind(f->value));
    return f->value.Scalar();
  }
  [[nodiscard]] std::string required(std::string_view key) const {
    std::string s = string(key);
    if (s.empty()) {
      if (get(key)) fail(key, "must not be empty");
      throw InputError(where_, path_, "missing required key \"" + std::string(key) + "\"");
    }
    return s;
  }
  [[nodiscard]] bool boolean(std::string_view key) const {
    const Field* f = get(key);
    if (!f || f->value.IsNull()) return false;
    if (f->value.IsScalar()) {
      const std::string& s = f->value.Scalar();
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
    }
    throw InputError(at(*f), field(key), "expected true or false, " + got_kind(f->value));
  }
  // A key we know but do not implement: an error naming it, if it is set.
  void unsupported(std::string_view key, const std::string& what) const {
    const Field* f = get(key);
    if (f && !f->value.IsNull()) fail(key, what);
  }

 private:
  const Doc& doc_;
  SourceLocation where_;
  std::string path_;
  std::map<std::string, Field, std::less<>> fields_;
};

// A named cluster, user or context: the file that defined it first and its list element.
struct Named {
  const Doc* doc = nullptr;
  Node item;
  std::string path;  // "clusters[2]"
};

struct Merged {
  std::vector<std::unique_ptr<Doc>> docs;
  std::map<std::string, Named> clusters, users, contexts;
  const Doc* current_doc = nullptr;  // the first file that sets current-context
  Field current;
};

std::string names_of(const std::map<std::string, Named>& m) {
  if (m.empty()) return "none are defined";
  std::vector<std::string> names;
  for (const auto& [name, _] : m) names.push_back(name);
  return listed(names);
}

// Reads a whole file; nullopt with the reason when it cannot.
std::optional<std::string> read_file(const fs::path& path, std::string& reason) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    reason = "is a directory";
    return std::nullopt;
  }
  if (fs::is_character_file(path, ec) || fs::is_block_file(path, ec)) {
    reason = "is a device, not a file";  // /dev/zero would never end
    return std::nullopt;
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    reason = errno != 0 ? std::strerror(errno) : "cannot open the file";
    return std::nullopt;
  }
  // Kubeconfigs, tokens and certificates are kilobytes; a pipe that never ends is refused at 64 MiB.
  constexpr std::size_t kMaxBytes = std::size_t{64} << 20;
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxBytes) {
      reason = "is larger than 64 MiB";
      return std::nullopt;
    }
  }
  if (in.bad()) {
    reason = "cannot read the file";
    return std::nullopt;
  }
  return text;
}

std::unique_ptr<Doc> read_doc(const std::string& file) {
  std::string reason;
  const auto text = read_file(file, reason);
  if (!text) {
    if (reason == "is a directory")
      throw InputError(SourceLocation{file, 0, 0}, "", "is a directory, not a kubeconfig");
    throw InputError(SourceLocation{file, 0, 0}, "", "cannot open the file (" + reason + ")");
  }
  auto doc = std::make_unique<Doc>();
  doc->file = file;
  doc->dir = fs::path(file).parent_path();
  detail::note_text_columns(*text, file);  // columns in characters
  // yaml-cpp reads a quoted string that no quote closes as running to the end of the file: a truncated
  // file's last value (a token) was sent as it stood.
  detail::check_last_quote_closed(*text, file);
  try {
    doc->root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    throw InputError(location(file, e.mark), "", "YAML syntax error: " + e.msg);
  }
  return doc;
}

void read_list(const Doc& d, const Obj& top, std::string_view key, std::string_view inner, Keys item_keys,
               std::map<std::string, Named>& into) {
  const Field* f = top.get(key);
  if (!f || f->value.IsNull()) return;
  if (!f->value.IsSequence())
    throw InputError(top.at(*f), std::string(key), "expected a list, " + got_kind(f->value));
  std::map<std::string, Node> here;
  for (std::size_t i = 0; i < f->value.size(); ++i) {
    const Node n = f->value[i];
    const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    const Obj item(d, n, top.mark(n), path, item_keys);
    const std::string name = item.required("name");
    if (const auto dup = here.find(name); dup != here.end())
      item.fail("name", "duplicate " + std::string(inner) + " name " + quote(name) + " (first at line " +
                            std::to_string(top.mark(dup->second).line) + ")");
    here.emplace(name, n);
    into.try_emplace(name, Named{&d, n, path});  // the first file that defines a name wins
  }
}

void merge(Merged& m, std::unique_ptr<Doc> doc) {
  const Doc& d = *doc;
  m.docs.push_back(std::move(doc));
  if (!d.root.IsDefined() || d.root.IsNull()) return;  // an empty file is an empty config, as for kubectl
  const Obj top(d, d.root, location(d.file, d.root.Mark()), "", kTopKeys);
  read_list(d, top, "clusters", "cluster", kClusterItemKeys, m.clusters);
  read_list(d, top, "users", "user", kUserItemKeys, m.users);
  read_list(d, top, "contexts", "context", kContextItemKeys, m.contexts);
  if (!m.current_doc && !top.string("current-context").empty()) {
    m.current_doc = &d;
    m.current = *top.get("current-context");
  }
}

// The named element's inner mapping (`cluster:`, `user:` or `context:`).
Obj inner(const Named& n, std::string_view key, Keys item_keys, Keys keys) {
  const Obj item(*n.doc, n.item, location(n.doc->file, n.item.Mark()), n.path, item_keys);
  const Field* f = item.get(key);
  if (!f) throw InputError(item.where(), n.path, "missing required key \"" + std::string(key) + "\"");
  return Obj(*n.doc, f->value, item.at(*f), item.field(key), keys);
}

// A path for a message, whole (quote() shortens long values).
std::string quote_path(const fs::path& p) {
  return "\"" + p.string() + "\"";
}

// A file named by a kubeconfig, relative to the kubeconfig's directory.
std::string read_named_file(const Obj& o, std::string_view key) {
  const std::string name = o.string(key);
  fs::path p(name);
  if (p.is_relative() && !o.doc().dir.empty()) p = o.doc().dir / p;
  std::string reason;
  auto text = read_file(p, reason);
  if (!text) o.fail(key, "cannot read " + quote_path(p) + " (" + reason + ")");
  return *std::move(text);
}

std::string decode_field(const Obj& o, std::string_view key) {
  try {
    return decode_base64(o.string(key));
  } catch (const std::invalid_argument& e) {
    o.fail(key, e.what());
  }
}

// The PEM text of a `X` / `X-data` pair, "" if neither is set. Checks what it holds, never printing it.
std::string pem_pair(const Obj& o, std::string_view file_key, std::string_view data_key, bool is_key) {
  const bool has_file = !o.string(file_key).empty();
  const bool has_data = !o.string(data_key).empty();
  if (has_file && has_data)
    o.fail(data_key, "both " + std::string(file_key) + " and " + std::string(data_key) + " are set; use one");
  if (!has_file && !has_data) return "";
  const std::string_view key = has_data ? data_key : file_key;
  std::string pem = has_data ? decode_field(o, key) : read_named_file(o, key);
  const std::string where = has_data ? "the decoded data" : "the file";
  if (is_key) {
    const auto begin = pem.find("-----BEGIN ");
    if (begin == std::string::npos || pem.find("PRIVATE KEY-----", begin) == std::string::npos)
      o.fail(key, where + " does not contain a PEM private key (-----BEGIN ... PRIVATE KEY-----)");
  } else if (pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    o.fail(key, where + " does not contain a PEM certificate (-----BEGIN CERTIFICATE-----)");
  }
  return pem;
}

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return c != ' ' && c != '\t' && c != '\n' && c != '\r'; };
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  return s;
}

// What is wrong with a cluster's `server`, or "": https:// or http://, a host (a name, an IPv4 address or
// a bracketed IPv6 one), an optional port from 1 to 65535, an optional path; nothing libcurl would read
// another way (a user name, blanks, control characters, a backslash).
std::string server_url_problem(const std::string& url) {
  const std::string example = " (such as https://127.0.0.1:6443)";
  const std::size_t scheme = url.starts_with("https://") ? 8 : url.starts_with("http://") ? 7 : 0;
  // A user name or password (before the host: an '@' in the authority, or anywhere without a scheme to
  // tell) is never echoed back in a message.
  const std::size_t authority_end = url.find_first_of("/?#", scheme);
  if (url.find('@') < (scheme == 0 ? url.size() : authority_end))
    return "a URL with a user name or password in it is not supported" + example;
  if (scheme == 0) return "expected a URL starting with https:// or http://, got " + quote(url);
  for (const char ch : url)
    if (static_cast<unsigned char>(ch) <= ' ' || ch == '\\' || ch == 0x7f)
      return "the URL has a blank, a control character or a backslash" + example;
  // Requests append their paths to the server's: a query or fragment would end up in the middle of them.
  if (url.find_first_of("?#", scheme) != std::string::npos)
    return "a URL with a query ('?') or a fragment ('#') is not supported; the server is https:// or "
           "http://, "
           "a host, an optional port and an optional path" +
           example;
  const std::size_t path = url.find('/', scheme);
  const std::string authority =
      url.substr(scheme, path == std::string::npos ? std::string::npos : path - scheme);
  std::string host = authority, port;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string::npos) return "the URL's IPv6 host has no ']', got " + quote(url);
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':')
        return "expected ':' and a port after the IPv6 host, got " + quote(url);
      port = authority.substr(close + 2);
      if (port.empty()) return "the URL has ':' but no port, got " + quote(url);
    }
    if (host.size() <= 2 || host.find_first_not_of("0123456789abcdefABCDEF:.", 1) != host.size() - 1)
      return "the URL's IPv6 host is not an address, got " + quote(url);
  } else {
    if (const std::size_t colon = authority.find(':'); colon != std::string::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      if (port.empty()) return "the URL has ':' but no port, got " + quote(url);
    }
    if (host.empty()) return "the URL has no host, got " + quote(url);
    if (host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
        std::string::npos)
      return "the URL's host has characters a host name cannot, got " + quote(url);
  }
  if (!port.empty() && (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
                        std::stoi(port) < 1 || std::stoi(port) > 65535))
    return "the URL's port must be a number from 1 to 65535, got " + quote(url);
  return "";
}

void read_cluster(const Obj& c, Credentials& out) {
  c.unsupported("tls-server-name", "not supported (shardflow verifies the server by the host of \"server\")");
  c.unsupported("proxy-url", "not supported (set HTTPS_PROXY instead; libcurl honours it)");
  out.server = c.required("server");
  if (const std::string why = server_url_problem(out.server); !why.empty()) c.fail("server", why);
  while (out.server.ends_with('/')) out.server.pop_back();
  out.insecure_skip_tls_verify = c.boolean("insecure-skip-tls-verify");
  out.ca_pem = pem_pair(c, "certificate-authority", "certificate-authority-data", false);
  if (out.insecure_skip_tls_verify && !out.ca_pem.empty())
    c.fail("insecure-skip-tls-verify",
           "is true although a certificate authority is given; use one or the other (as kubectl requires)");
}

void read_user(const Obj& u, Credentials& out) {
  u.unsupported("exec",
                "exec credential plugins are not supported (use a token, tokenFile or a client "
                "certificate, e.g. from `kubectl create token`)");
  u.unsupported("auth-provider",
                "auth-provider plugins are not supported (use a token, tokenFile or a client "
                "certificate)");
  u.unsupported("username", "basic authentication is not supported");
  u.unsupported("password", "basic authentication is not supported");
  for (std::string_view k : {"as", "as-uid", "as-groups", "as-user-extra"})
    u.unsupported(k, "impersonation is not supported");
  out.client_cert_pem = pem_pair(u, "client-certificate", "client-certificate-data", false);
  out.client_key_pem = pem_pair(u, "client-key", "client-key-data", true);
  if (!out.client_cert_pem.empty() && out.client_key_pem.empty())
    u.fail(u.get("client-certificate-data") ? "client-certificate-data" : "client-certificate",
           "a client certificate needs a key: client-key or client-key-data is not set");
  if (out.client_cert_pem.empty() && !out.client_key_pem.empty())
    u.fail(u.get("client-key-data") ? "client-key-data" : "client-key",
           "a client key needs a certificate: client-certificate or client-certificate-data is not set");
  const bool has_token = !u.string("token").empty();
  const bool has_token_file = !u.string("tokenFile").empty();
  if (has_token && has_token_file) u.fail("tokenFile", "both token and tokenFile are set; use one");
  if (has_token) out.token = trim(u.string("token"));
  if (has_token_file) {
    out.token = trim(read_named_file(u, "tokenFile"));
    if (out.token.empty()) u.fail("tokenFile", "the file is empty");
  }
  if (out.token.find_first_of("\r\n") != std::string::npos)
    u.fail(has_token ? "token" : "tokenFile", "the token must be one line");
}

std::vector<std::string> kubeconfig_files(const std::string& path) {
  std::error_code exists_ec;
  if (!path.empty() && (path.find(':') == std::string::npos || fs::exists(path, exists_ec))) return {path};
  const char* env = path.empty() ? std::getenv("KUBECONFIG") : path.c_str();
  const std::string where = path.empty() ? "$KUBECONFIG" : path;
  if (env && *env) {
    std::vector<std::string> named, present;
    std::string_view rest(env);
    while (true) {
      const auto colon = rest.find(':');
      const std::string one(rest.substr(0, colon));
      if (!one.empty() && std::find(named.begin(), named.end(), one) == named.end()) named.push_back(one);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    std::error_code ec;
    for (const auto& f : named)
      if (fs::exists(f, ec)) present.push_back(f);
    if (present.empty())
      throw InputError(SourceLocation{where, 0, 0}, "",
                       "none of its files exists (" +
                           (named.empty() ? std::string("it lists none") : listed(named)) + ")");
    return present;
  }
  const char* home = std::getenv("HOME");
  if (!home || !*home)
    throw InputError({}, "kubeconfig", "no file given, $KUBECONFIG is not set and $HOME is not set");
  std::string file = std::string(home) + "/.kube/config";
  std::error_code ec;
  if (!fs::exists(file, ec))
    throw InputError(SourceLocation{file, 0, 0}, "",
                     "no kubeconfig: this default does not exist and $KUBECONFIG is not set; give the "
                     "cluster's with --kubeconfig FILE");
  return {file};
}

}  // namespace

std::string decode_base64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t chars = 0, pad = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || c == '\r') continue;
    if (c == '=') {
      ++pad;
      if (pad > 2)
        throw std::invalid_argument("not valid base64: too much '=' padding at character " +
                                    std::to_string(i + 1));
      continue;
    }
    int v = -1;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    if (v < 0 || pad > 0)
      throw std::invalid_argument("not valid base64 at character " + std::to_string(i + 1));
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    ++chars;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFFu));
    }
  }
  if ((chars + pad) % 4 != 0 || chars % 4 == 1)
    throw std::invalid_argument("not valid base64: " + std::to_string(chars + pad) +
                                " characters, not a multiple of 4 (missing '=' padding?)");
  return out;
}

Credentials load_kubeconfig(const std::string& path, const std::string& context) {
  Merged m;
  for (const auto& f : kubeconfig_files(path)) merge(m, read_doc(f));
  std::vector<std::string> files, absolute;
  for (const auto& d : m.docs) {
    files.push_back(d->file);
    std::error_code ec;
    const fs::path a = fs::absolute(d->file, ec);
    absolute.push_back(ec ? d->file : a.lexically_normal().string());
  }
  const std::string all_files = join(files, ":");

  std::string name = context;
  SourceLocation name_at{all_files, 0, 0};
  std::string name_field = "contexts";
  if (name.empty()) {
    if (!m.current_doc)
      throw InputError(SourceLocation{all_files, 0, 0}, "current-context",
                       "not set; name a context (contexts: " + names_of(m.contexts) + ")");
    const Obj top(*m.current_doc, m.current_doc->root, {}, "", kTopKeys);
    name = top.string("current-context");
    name_at = top.at(m.current);
    name_field = "current-context";
  }
  const auto ctx = m.contexts.find(name);
  if (ctx == m.contexts.end())
    throw InputError(name_at, name_field,
                     "no context named " + quote(name) + " (contexts: " + names_of(m.contexts) + ")");

  Credentials out;
  out.files = join(absolute, ":");
  out.context = name;
  out.source = ctx->second.doc->file;
  const Obj c = inner(ctx->second, "context", kContextItemKeys, kContextKeys);
  const std::string cluster = c.required("cluster");
  const std::string user = c.string("user");
  if (const std::string ns = c.string("namespace"); !ns.empty()) {
    // Checked here, at its place in the file: checked later it was blamed on a --namespace never given.
    if (!is_label(ns, 63))
      c.fail("namespace",
             "a namespace is 1 to 63 characters a-z, 0-9 and '-', starting and ending with a letter "
             "or digit, got " +
                 quote(ns));
    out.namespace_name = ns;
  }

  const auto cl = m.clusters.find(cluster);
  if (cl == m.clusters.end())
    c.fail("cluster", "no cluster named " + quote(cluster) + " (clusters: " + names_of(m.clusters) + ")");
  read_cluster(inner(cl->second, "cluster", kClusterItemKeys, kClusterKeys), out);

  if (!user.empty()) {
    const auto us = m.users.find(user);
    if (us == m.users.end())
      c.fail("user", "no user named " + quote(user) + " (users: " + names_of(m.users) + ")");
    read_user(inner(us->second, "user", kUserItemKeys, kUserKeys), out);
  }
  return out;
}

Credentials in_cluster_credentials(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    throw InputError(
        SourceLocation{"in-cluster", 0, 0}, "",
        "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running in a pod?)");
  Credentials out;
  const std::string h(host);
  out.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  out.source = "in-cluster";
  const fs::path dir(sa_dir);
  std::string reason;
  auto token = read_file(dir / "token", reason);
  if (!token)
    throw InputError(SourceLocation{(dir / "token").string(), 0, 0}, "",
                     "cannot read the service account token (" + reason + ")");
  out.token = trim(*std::move(token));
  if (out.token.empty())
    throw InputError(SourceLocation{(dir / "token").string(), 0, 0}, "",
                     "the service account token is empty");
  auto ca = read_file(dir / "ca.crt", reason);
  if (!ca)
    throw InputError(SourceLocation{(dir / "ca.crt").string(), 0, 0}, "",
                     "cannot read the cluster's CA certificate (" + reason + ")");
  if (ca->find("-----BEGIN CERTIFICATE-----") == std::string::npos)
    throw InputError(SourceLocation{(dir / "ca.crt").string(), 0, 0}, "",
                     "does not contain a PEM certificate (-----BEGIN CERTIFICATE-----)");
  out.ca_pem = *std::move(ca);
  std::error_code ec;
  if (fs::exists(dir / "namespace", ec)) {
    if (auto ns = read_file(dir / "namespace", reason); ns && !trim(*ns).empty())
      out.namespace_name = trim(*ns);
  }
  return out;
}

}  // namespace shardflow::k8s
