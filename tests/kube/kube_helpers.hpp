// Helpers for the Kubernetes client's tests: scratch directories, certificates made with the openssl
// command, and the fake API server (fake_apiserver.py) on 127.0.0.1.
#pragma once

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/k8s/client.hpp>
#include <shardflow/k8s/kubeconfig.hpp>

extern char** environ;

namespace shardflow::kubetest {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

// A fresh directory per test process (CTest runs test cases in parallel processes).
inline fs::path scratch(const std::string& name) {
  fs::path dir =
      fs::path(SHARDFLOW_BINARY_DIR) / "test-scratch" / "kube" / (name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline std::string base64(const std::string& in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) | static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

// Self-signed certificates: the server's (for 127.0.0.1; also its own CA), another one (a wrong CA), and a
// client's (which the server trusts as its own CA for client certificates).
struct Certs {
  fs::path dir;
  std::string server_pem, server_key_pem, other_pem, client_pem, client_key_pem;

  explicit Certs(const fs::path& d) : dir(d) {
    make("server", "fake-apiserver", true);
    make("other", "someone-else", true);
    make("client", "shardflow-test", false);
    server_pem = slurp(dir / "server.crt");
    server_key_pem = slurp(dir / "server.key");
    other_pem = slurp(dir / "other.crt");
    client_pem = slurp(dir / "client.crt");
    client_key_pem = slurp(dir / "client.key");
  }

 private:
  void make(const std::string& name, const std::string& cn, bool for_localhost) const {
    const std::string cmd =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -keyout '" +
        (dir / (name + ".key")).string() + "' -out '" + (dir / (name + ".crt")).string() +
        "' -subj /CN=" + cn + (for_localhost ? " -addext subjectAltName=IP:127.0.0.1" : "") +
        " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("openssl failed: " + cmd);
  }
};

inline constexpr const char* kToken = "t0ken-SECRET-4f9a";

// fake_apiserver.py, started for one test and killed at its end.
class FakeServer {
 public:
  FakeServer(const Certs& certs, bool client_ca = false) {
    std::vector<std::string> args = {
        "python3", std::string(SHARDFLOW_SOURCE_DIR) + "/tests/kube/fake_apiserver.py",
        "--cert",  (certs.dir / "server.crt").string(),
        "--key",   (certs.dir / "server.key").string(),
        "--token", kToken};
    if (client_ca) {
      args.push_back("--client-ca");
      args.push_back((certs.dir / "client.crt").string());
    }
    // stdout: the "PORT n" line. stdin: a pipe the server reads until EOF, which comes when this process
    // ends however it ends (even by an abort that skips destructors), so no server outlives its test.
    int out[2], in[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, "python3", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(in[0]);
    stdin_ = in[1];
    if (rc != 0) {
      close(out[0]);
      throw std::runtime_error("cannot start python3");
    }
    std::string line;
    char c = 0;
    while (read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
    close(out[0]);
    if (!line.starts_with("PORT ")) {
      stop();
      throw std::runtime_error("fake_apiserver.py did not start (printed \"" + line + "\")");
    }
    port_ = std::stoi(line.substr(5));
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;
  ~FakeServer() { stop(); }

  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }

  // Talks to the control endpoints (no token, no rate limit, not counted by the tested client).
  nlohmann::json control(const std::string& method, const std::string& path,
                         const nlohmann::json& body = {}) {
    k8s::Credentials c;
    c.server = url();
    c.insecure_skip_tls_verify = true;
    k8s::Client client(c, {.qps = 0, .max_retries = 0});
    const auto r = client.request(method, path, body.is_null() ? "" : body.dump());
    return nlohmann::json::parse(r.body);
  }
  void script(const std::string& path, const nlohmann::json& responses) {
    control("POST", "/_script", {{"path", path}, {"responses", responses}});
  }
  void watch(const nlohmann::json& cfg) { control("POST", "/_watch", cfg); }
  // The logged requests to `path`.
  std::vector<nlohmann::json> log(const std::string& path) {
    std::vector<nlohmann::json> out;
    const nlohmann::json all = control("GET", "/_log");
    for (const auto& r : all["requests"])
      if (r["path"] == path) out.push_back(r);
    return out;
  }

 private:
  void stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    if (stdin_ >= 0) close(stdin_);
    stdin_ = -1;
  }
  pid_t pid_ = -1;
  int stdin_ = -1;
  int port_ = 0;
};

// Credentials for the fake server: its CA and the right token.
inline k8s::Credentials creds_for(const FakeServer& s, const Certs& certs) {
  k8s::Credentials c;
  c.server = s.url();
  c.ca_pem = certs.server_pem;
  c.token = kToken;
  return c;
}

}  // namespace shardflow::kubetest
