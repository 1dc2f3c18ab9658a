#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <shardflow/core/error.hpp>
#include <shardflow/k8s/kubeconfig.hpp>

#include "kube/kube_helpers.hpp"

using namespace shardflow;
using namespace shardflow::kubetest;
using shardflow::k8s::Credentials;
using shardflow::k8s::load_kubeconfig;

namespace {

const std::string kCa = "-----BEGIN CERTIFICATE-----\nMIIBca\n-----END CERTIFICATE-----\n";
const std::string kCert = "-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n";
const std::string kKey = "-----BEGIN EC PRIVATE KEY-----\nKEYSECRETbody99\n-----END EC PRIVATE KEY-----\n";
const std::string kSecretToken = "tok-SECRET-123456";

// Sets an environment variable for one scope.
class Env {
 public:
  Env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  ~Env() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

std::string message_of(const std::string& path, const std::string& context = "") {
  try {
    load_kubeconfig(path, context);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("kubeconfig: token, CA file relative to the kubeconfig, context namespace", "[kube]") {
  const fs::path dir = scratch("kc-token");
  fs::create_directories(dir / "pki");
  write(dir / "pki" / "ca.crt", kCa);
  write(dir / "kc.yaml", R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority: pki/ca.crt
users:
- name: dev-user
  user:
    token: tok-SECRET-123456
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: pipelines
- name: other
  context:
    cluster: dev-cluster
)");
  const Credentials c = load_kubeconfig((dir / "kc.yaml").string(), "");
  CHECK(c.server == "https://127.0.0.1:6443");
  CHECK(c.ca_pem == kCa);
  CHECK_FALSE(c.insecure_skip_tls_verify);
  CHECK(c.token == kSecretToken);
  CHECK(c.client_cert_pem.empty());
  CHECK(c.client_key_pem.empty());
  CHECK(c.namespace_name == "pipelines");
  CHECK(c.context == "dev");
  CHECK(c.source == (dir / "kc.yaml").string());

  // An explicit context wins over current-context; without a namespace it is "default"; no user, no token.
  const Credentials o = load_kubeconfig((dir / "kc.yaml").string(), "other");
  CHECK(o.context == "other");
  CHECK(o.namespace_name == "default");
  CHECK(o.token.empty());
  CHECK(o.ca_pem == kCa);
}

TEST_CASE("kubeconfig: a context's namespace that is not a name is named at its place", "[kube]") {
  // Checked later, it was blamed on a --namespace the user never gave.
  const fs::path dir = scratch("kc-bad-ns");
  write(dir / "kc.yaml",
        "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true}\n"
        "contexts:\n- name: a\n  context:\n    cluster: c\n    namespace: Bad_NS\ncurrent-context: a\n");
  CHECK(message_of((dir / "kc.yaml").string()) ==
        (dir / "kc.yaml").string() +
            ":8:16: contexts[0].context.namespace: a namespace is 1 to 63 characters a-z, 0-9 and '-', "
            "starting and ending with a letter or digit, got \"Bad_NS\"");
}

TEST_CASE("kubeconfig: the -data forms, client certificates from files, tokenFile, insecure", "[kube]") {
  const fs::path dir = scratch("kc-data");
  write(dir / "client.crt", kCert);
  write(dir / "client.key", kKey);
  write(dir / "token", kSecretToken + "\n");
  write(dir / "kc.yaml",
        "clusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1\n"
        "    certificate-authority-data: " +
            base64(kCa) +
            "\n"
            "- name: insecure\n  cluster:\n    server: http://127.0.0.1:8080/proxy/@team\n"
            "    insecure-skip-tls-verify: true\n"
            "users:\n- name: data\n  user:\n"
            "    client-certificate-data: " +
            base64(kCert) +
            "\n"
            "    client-key-data: " +
            base64(kKey) +
            "\n"
            "- name: files\n  user:\n    client-certificate: client.crt\n"
            "    client-key: " +
            (dir / "client.key").string() +
            "\n    tokenFile: token\n"
            "contexts:\n- name: a\n  context: {cluster: c, user: data}\n"
            "- name: b\n  context: {cluster: insecure, user: files, namespace: ns-b}\n");
  const Credentials a = load_kubeconfig((dir / "kc.yaml").string(), "a");
  CHECK(a.server == "https://10.0.0.1");
  CHECK(a.ca_pem == kCa);
  CHECK(a.client_cert_pem == kCert);
  CHECK(a.client_key_pem == kKey);
  CHECK(a.token.empty());
  const Credentials b = load_kubeconfig((dir / "kc.yaml").string(), "b");
  CHECK(b.server == "http://127.0.0.1:8080/proxy/@team");  // an '@' in the path is no user name
  CHECK(b.insecure_skip_tls_verify);
  CHECK(b.ca_pem.empty());
  CHECK(b.client_cert_pem == kCert);
  CHECK(b.client_key_pem == kKey);
  CHECK(b.token == kSecretToken);  // without the newline
  CHECK(b.namespace_name == "ns-b");
}

TEST_CASE("kubeconfig: KUBECONFIG is merged as kubectl merges it, else ~/.kube/config is read", "[kube]") {
  const fs::path dir = scratch("kc-merge");
  // first.yaml sets current-context and defines cluster "c"; second.yaml defines "c" again (ignored: the
  // first file that defines a name wins), the user and the context "y", and its own current-context
  // (ignored too).
  write(dir / "first.yaml", "current-context: y\nclusters:\n- name: c\n  cluster: {server: https://first}\n");
  write(dir / "second.yaml",
        "current-context: x\nclusters:\n- name: c\n  cluster: {server: https://second}\n"
        "- name: d\n  cluster: {server: https://d}\n"
        "users:\n- name: u\n  user: {token: abc}\n"
        "contexts:\n- name: y\n  context: {cluster: c, user: u}\n"
        "- name: x\n  context: {cluster: d}\n");
  write(dir / "third.yaml", "contexts:\n- name: y\n  context: {cluster: d}\n");
  const std::string list = (dir / "first.yaml").string() + ":" + (dir / "missing.yaml").string() +
                           "::" + (dir / "second.yaml").string() + ":" + (dir / "third.yaml").string();
  {
    const Env env("KUBECONFIG", list.c_str());
    const Credentials c = load_kubeconfig("", "");
    CHECK(c.context == "y");
    CHECK(c.server == "https://first");
    CHECK(c.token == "abc");
    CHECK(c.source == (dir / "second.yaml").string());
    // The files read, absolute, as a list a later --kubeconfig reads the same way (a run records it).
    const std::string read = (dir / "first.yaml").string() + ":" + (dir / "second.yaml").string() + ":" +
                             (dir / "third.yaml").string();
    CHECK(c.files == read);
    const Credentials again = load_kubeconfig(read, "");
    CHECK(again.server == "https://first");
    CHECK(again.token == "abc");
    CHECK(again.files == read);
    CHECK(load_kubeconfig("", "x").server == "https://d");
    // An explicit path ignores KUBECONFIG.
    CHECK(message_of((dir / "first.yaml").string()) ==
          (dir / "first.yaml").string() +
              ":1:18: current-context: no context named \"y\" (contexts: none are "
              "defined)");
  }
  {
    const std::string none = (dir / "a.yaml").string() + ":" + (dir / "b.yaml").string();
    const Env env("KUBECONFIG", none.c_str());
    CHECK(message_of("") == "$KUBECONFIG: none of its files exists (" + (dir / "a.yaml").string() + ", " +
                                (dir / "b.yaml").string() + ")");
  }
  {
    fs::create_directories(dir / "home" / ".kube");
    write(dir / "home" / ".kube" / "config",
          "current-context: h\nclusters: [{name: c, cluster: {server: https://home}}]\n"
          "contexts: [{name: h, context: {cluster: c}}]\n");
    const Env env("KUBECONFIG", "");
    const Env home("HOME", (dir / "home").c_str());
    CHECK(load_kubeconfig("", "").server == "https://home");
  }
  {
    // Neither $KUBECONFIG nor ~/.kube/config: say where to give one.
    const Env env("KUBECONFIG", "");
    const Env home("HOME", (dir / "nohome").c_str());
    CHECK(message_of("") ==
          (dir / "nohome").string() +
              "/.kube/config: no kubeconfig: this default does not exist and $KUBECONFIG is "
              "not set; give the cluster's with --kubeconfig FILE");
  }
}

TEST_CASE("kubeconfig: in-cluster credentials from the service account", "[kube]") {
  const fs::path dir = scratch("kc-incluster");
  write(dir / "token", kSecretToken + "\n");
  write(dir / "ca.crt", kCa);
  write(dir / "namespace", "jobs\n");
  {
    const Env host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
    const Env port("KUBERNETES_SERVICE_PORT", "443");
    const Credentials c = k8s::in_cluster_credentials(dir.string());
    CHECK(c.server == "https://10.96.0.1:443");
    CHECK(c.token == kSecretToken);
    CHECK(c.ca_pem == kCa);
    CHECK(c.namespace_name == "jobs");
    CHECK(c.source == "in-cluster");
  }
  {
    const Env host("KUBERNETES_SERVICE_HOST", "fd00::1");
    const Env port("KUBERNETES_SERVICE_PORT", "6443");
    CHECK(k8s::in_cluster_credentials(dir.string()).server == "https://[fd00::1]:6443");
    fs::remove(dir / "namespace");
    CHECK(k8s::in_cluster_credentials(dir.string()).namespace_name == "default");
    fs::remove(dir / "token");
    CHECK_THROWS_WITH(
        k8s::in_cluster_credentials(dir.string()),
        (dir / "token").string() + ": cannot read the service account token (No such file or directory)");
  }
  const Env host("KUBERNETES_SERVICE_HOST", nullptr);
  CHECK_THROWS_WITH(
      k8s::in_cluster_credentials(dir.string()),
      "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running "
      "in a pod?)");
}

TEST_CASE("kubeconfig: base64", "[kube]") {
  CHECK(k8s::decode_base64("") == "");
  CHECK(k8s::decode_base64("aGVsbG8=") == "hello");
  CHECK(k8s::decode_base64("aGVs\nbG8h") == "hello!");
  CHECK(k8s::decode_base64("aA==") == "h");
  CHECK_THROWS_WITH(k8s::decode_base64("aGV*bG8="), "not valid base64 at character 4");
  CHECK_THROWS_WITH(k8s::decode_base64("aGVsbG8"),
                    "not valid base64: 7 characters, not a multiple of 4 (missing '=' padding?)");
  CHECK_THROWS_WITH(k8s::decode_base64("aA==aA=="), "not valid base64 at character 5");
  CHECK_THROWS_WITH(k8s::decode_base64("a==="), "not valid base64: too much '=' padding at character 4");
}

TEST_CASE("kubeconfig: every error names the file, line, column and field, never a secret", "[kube]") {
  const fs::path dir = scratch("kc-errors");
  const std::string d = dir.string();
  const std::string f = (dir / "kubeconfig.yaml").string();
  // A cluster and a user that work, for the cases that break something else.
  const std::string ok_cluster = "- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n";
  const std::string ok_user = "- name: u\n  user:\n    token: " + kSecretToken + "\n";
  struct Case {
    const char* what;
    std::string yaml;
    std::string context;
    std::string expected;  // after "<file>"
  };
  const std::vector<Case> cases = {
      {"YAML syntax", "clusters: [\n", "a", ":2:1: YAML syntax error: end of sequence flow not found"},
      {"not a mapping", "- a\n", "a", ":1:1: expected a mapping, got a list"},
      {"a missing context",
       "contexts:\n- name: a\n  context: {cluster: c}\n- name: b\n  context: {cluster: c}\n", "x",
       ": contexts: no context named \"x\" (contexts: a, b)"},
      {"no current-context", "contexts:\n- name: a\n  context: {cluster: c}\n", "",
       ": current-context: not set; name a context (contexts: a)"},
      {"current-context names a missing context",
       "current-context: gone\ncontexts:\n- name: a\n  context: {cluster: c}\n", "",
       ":1:18: current-context: no context named \"gone\" (contexts: a)"},
      {"a missing context among 25: the first 10 named",
       [] {
         std::string y = "contexts:\n";
         for (int i = 10; i < 35; ++i) y += "- name: k" + std::to_string(i) + "\n  context: {cluster: c}\n";
         return y;
       }(),
       "x",
       ": contexts: no context named \"x\" (contexts: k10, k11, k12, k13, k14, k15, k16, k17, k18, k19, and "
       "15 "
       "more)"},
      {"a context naming a missing cluster",
       "clusters:\n" + ok_cluster + "contexts:\n- name: a\n  context:\n    cluster: prod\n", "a",
       ":8:14: contexts[0].context.cluster: no cluster named \"prod\" (clusters: c)"},
      {"a context naming a missing user",
       "clusters:\n" + ok_cluster + "users:\n" + ok_user +
           "contexts:\n- name: a\n  context: {cluster: c, user: admin}\n",
       "a", ":11:31: contexts[0].context.user: no user named \"admin\" (users: u)"},
      {"a column after a character of two bytes (counted once)",
       "current-context: gone\ncontexts:\n- {name: \"\xc3\xa9\", context: {cluster: prod}}\n", "\xc3\xa9",
       ":3:34: contexts[0].context.cluster: no cluster named \"prod\" (clusters: none are defined)"},
      {"a context without a cluster", "contexts:\n- name: a\n  context:\n    user: u\n", "a",
       ":4:5: contexts[0].context: missing required key \"cluster\""},
      {"a context without its mapping", "contexts:\n- name: a\n", "a",
       ":2:3: contexts[0]: missing required key \"context\""},
      {"a cluster without a server",
       "clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: true\n"
       "contexts:\n- name: a\n  context: {cluster: c}\n",
       "a", ":4:5: clusters[0].cluster: missing required key \"server\""},
      {"a server that is not a URL",
       "clusters:\n- name: c\n  cluster:\n    server: 127.0.0.1:6443\ncontexts:\n- name: a\n  context: "
       "{cluster: c}\n",
       "a",
       ":4:13: clusters[0].cluster.server: expected a URL starting with https:// or http://, got "
       "\"127.0.0.1:6443\""},
      {"a misspelt key",
       "clusters:\n- name: c\n  cluster:\n    server: https://x\n    certificate-authorty: ca.crt\n"
       "contexts:\n- name: a\n  context: {cluster: c}\n",
       "a",
       ":5:5: clusters[0].cluster.certificate-authorty: unknown key \"certificate-authorty\" (did you mean "
       "\"certificate-authority\"?)"},
      {"bad base64 in certificate-authority-data",
       "clusters:\n- name: c\n  cluster:\n    server: https://x\n    certificate-authority-data: LS0t*LS0t\n"
       "contexts:\n- name: a\n  context: {cluster: c}\n",
       "a", ":5:33: clusters[0].cluster.certificate-authority-data: not valid base64 at character 5"},
      {"bad base64 in client-key-data",
       "clusters:\n" + ok_cluster +
           "users:\n- name: u\n  user:\n    client-certificate-data: " + base64(kCert) +
           "\n    client-key-data: S0VZU0VDUkVUYm9keTk5!\ncontexts:\n- name: a\n  context: {cluster: c, "
           "user: u}\n",
       "a", ":9:22: users[0].user.client-key-data: not valid base64 at character 21"},
      {"a key that is not PEM",
       "clusters:\n" + ok_cluster + "users:\n- name: u\n  user:\n    client-certificate-data: " +
           base64(kCert) + "\n    client-key-data: " + base64("KEYSECRETbody99") +
           "\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a",
       ":9:22: users[0].user.client-key-data: the decoded data does not contain a PEM private key "
       "(-----BEGIN "
       "... PRIVATE KEY-----)"},
      {"an unreadable CA file",
       "clusters:\n- name: c\n  cluster:\n    server: https://x\n    certificate-authority: pki/nope.crt\n"
       "contexts:\n- name: a\n  context: {cluster: c}\n",
       "a",
       ":5:28: clusters[0].cluster.certificate-authority: cannot read \"" + d +
           "/pki/nope.crt\" (No such file or directory)"},
      {"both CA forms",
       "clusters:\n- name: c\n  cluster:\n    server: https://x\n    certificate-authority: ca.crt\n"
       "    certificate-authority-data: " +
           base64(kCa) + "\ncontexts:\n- name: a\n  context: {cluster: c}\n",
       "a",
       ":6:33: clusters[0].cluster.certificate-authority-data: both certificate-authority and "
       "certificate-authority-data are set; use one"},
      {"insecure with a CA",
       "clusters:\n- name: c\n  cluster:\n    server: https://x\n    insecure-skip-tls-verify: true\n"
       "    certificate-authority-data: " +
           base64(kCa) + "\ncontexts:\n- name: a\n  context: {cluster: c}\n",
       "a",
       ":5:31: clusters[0].cluster.insecure-skip-tls-verify: is true although a certificate authority is "
       "given; "
       "use one or the other (as kubectl requires)"},
      {"insecure not a boolean",
       "clusters:\n- name: c\n  cluster:\n    server: https://x\n    insecure-skip-tls-verify: maybe\n"
       "contexts:\n- name: a\n  context: {cluster: c}\n",
       "a", ":5:31: clusters[0].cluster.insecure-skip-tls-verify: expected true or false, got a string"},
      {"tls-server-name",
       "clusters:\n- name: c\n  cluster:\n    server: https://x\n    tls-server-name: api.internal\n"
       "contexts:\n- name: a\n  context: {cluster: c}\n",
       "a",
       ":5:22: clusters[0].cluster.tls-server-name: not supported (shardflow verifies the server by the host "
       "of "
       "\"server\")"},
      {"an exec plugin",
       "clusters:\n" + ok_cluster +
           "users:\n- name: u\n  user:\n    exec:\n      command: gke-gcloud-auth-plugin\n"
           "contexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a",
       ":9:7: users[0].user.exec: exec credential plugins are not supported (use a token, tokenFile or a "
       "client certificate, e.g. from `kubectl create token`)"},
      {"an auth-provider plugin",
       "clusters:\n" + ok_cluster +
           "users:\n- name: u\n  user:\n    auth-provider: {name: oidc}\n"
           "contexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a",
       ":8:20: users[0].user.auth-provider: auth-provider plugins are not supported (use a token, tokenFile "
       "or a "
       "client certificate)"},
      {"basic auth",
       "clusters:\n" + ok_cluster + "users:\n- name: u\n  user:\n    username: admin\n    password: " +
           kSecretToken + "\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a", ":8:15: users[0].user.username: basic authentication is not supported"},
      {"a certificate without a key",
       "clusters:\n" + ok_cluster + "users:\n- name: u\n  user:\n    client-certificate-data: " +
           base64(kCert) + "\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a",
       ":8:30: users[0].user.client-certificate-data: a client certificate needs a key: client-key or "
       "client-key-data is not set"},
      {"token and tokenFile",
       "clusters:\n" + ok_cluster + "users:\n- name: u\n  user:\n    token: " + kSecretToken +
           "\n    tokenFile: t\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a", ":9:16: users[0].user.tokenFile: both token and tokenFile are set; use one"},
      {"an unreadable tokenFile",
       "clusters:\n" + ok_cluster +
           "users:\n- name: u\n  user:\n    tokenFile: /nonexistent/token\n"
           "contexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a", ":8:16: users[0].user.tokenFile: cannot read \"/nonexistent/token\" (No such file or directory)"},
      {"a token that is a list",
       "clusters:\n" + ok_cluster + "users:\n- name: u\n  user:\n    token: [" + kSecretToken +
           "]\n"
           "contexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a", ":8:12: users[0].user.token: expected a string, got a list"},
      // A typo that makes a secret a value of the wrong type, or part of a key: its kind, never its text.
      {"token: without its space",
       "clusters:\n" + ok_cluster + "users:\n- name: u\n  user:\n    token:" + kSecretToken +
           "\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a", ":8:5: users[0].user: expected a mapping, got a string"},
      {"client-key-data: without its space",
       "clusters:\n" + ok_cluster + "users:\n- name: u\n  user:\n    client-certificate-data: " +
           base64(kCert) + "\n    client-key-data:" + base64(kKey) +
           ": x\ncontexts:\n- name: a\n  context: "
           "{cluster: c, user: u}\n",
       "a",
       ":9:5: users[0].user.client-key-data...: unknown key \"client-key-data...\" (did you mean "
       "\"client-key-data\"?)"},
      {"a token whose closing quote is missing (the file cut short)",
       "clusters:\n" + ok_cluster + "users:\n- name: u\n  user:\n    token: \"" + kSecretToken, "a",
       ":8:12: a quoted value that no quote closes: it runs to the end of the file (is the file cut short, "
       "or "
       "its closing quote missing?)"},
      {"users a list of tokens",
       "clusters:\n" + ok_cluster + "users: [" + kSecretToken +
           "]\ncontexts:\n- name: a\n  context: {cluster: c}\n",
       "a", ":5:9: users[0]: expected a mapping, got a string"},
      // A server libcurl would read another way (another host, a bad port) is refused here.
      {"a server with a user name",
       "clusters:\n- name: c\n  cluster:\n    server: 'https://127.0.0.1:1\\@evil'\ncontexts:\n- name: a\n"
       "  context: {cluster: c}\n",
       "a",
       ":4:13: clusters[0].cluster.server: a URL with a user name or password in it is not supported (such "
       "as "
       "https://127.0.0.1:6443)"},
      {"a server with a query (a token in it is not echoed)",
       "clusters:\n- name: c\n  cluster:\n    server: 'https://127.0.0.1:6443/?access_token=" + kSecretToken +
           "'\ncontexts:\n- name: a\n  context: {cluster: c}\n",
       "a",
       ":4:13: clusters[0].cluster.server: a URL with a query ('?') or a fragment ('#') is not supported; "
       "the "
       "server is https:// or http://, a host, an optional port and an optional path (such as "
       "https://127.0.0.1:6443)"},
      {"a server with a fragment",
       "clusters:\n- name: c\n  cluster:\n    server: 'https://127.0.0.1:6443#x'\ncontexts:\n- name: a\n"
       "  context: {cluster: c}\n",
       "a",
       ":4:13: clusters[0].cluster.server: a URL with a query ('?') or a fragment ('#') is not supported; "
       "the "
       "server is https:// or http://, a host, an optional port and an optional path (such as "
       "https://127.0.0.1:6443)"},
      {"a server without a host",
       "clusters:\n- name: c\n  cluster:\n    server: https://:6443\ncontexts:\n- name: a\n  context: "
       "{cluster: c}\n",
       "a", ":4:13: clusters[0].cluster.server: the URL has no host, got \"https://:6443\""},
      {"a server port out of range",
       "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:99999\ncontexts:\n- name: a\n"
       "  context: {cluster: c}\n",
       "a",
       ":4:13: clusters[0].cluster.server: the URL's port must be a number from 1 to 65535, got "
       "\"https://127.0.0.1:99999\""},
      {"an IPv6 server without its ']'",
       "clusters:\n- name: c\n  cluster:\n    server: https://[::1\ncontexts:\n- name: a\n  context: "
       "{cluster: c}\n",
       "a", ":4:13: clusters[0].cluster.server: the URL's IPv6 host has no ']', got \"https://[::1\""},
      {"a device as the token file",
       "clusters:\n" + ok_cluster +
           "users:\n- name: u\n  user:\n    tokenFile: /dev/zero\n"
           "contexts:\n- name: a\n  context: {cluster: c, user: u}\n",
       "a", ":8:16: users[0].user.tokenFile: cannot read \"/dev/zero\" (is a device, not a file)"},
      {"a duplicate name",
       "clusters:\n" + ok_cluster + ok_cluster + "contexts:\n- name: a\n  context: {cluster: c}\n", "a",
       ":5:9: clusters[1].name: duplicate cluster name \"c\" (first at line 2)"},
      {"clusters not a list", "clusters: {c: 1}\n", "a", ":1:11: clusters: expected a list, got a mapping"},
      {"an unknown top-level key", "clusters: []\ncontext: []\n", "a",
       ":2:1: context: unknown key \"context\" (did you mean \"contexts\"?)"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    write(dir / "kubeconfig.yaml", c.yaml);
    const std::string msg = message_of(f, c.context);
    CHECK(msg == f + c.expected);
    CHECK(msg.find(kSecretToken) == std::string::npos);
    CHECK(msg.find("KEYSECRET") == std::string::npos);
    CHECK(msg.find(base64(kKey)) == std::string::npos);
  }
  CHECK(message_of(d + "/absent.yaml") ==
        d + "/absent.yaml: cannot open the file (No such file or directory)");
  CHECK(message_of(d) == d + ": is a directory, not a kubeconfig");
}
