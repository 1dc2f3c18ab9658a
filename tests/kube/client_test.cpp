#include <atomic>
#include <chrono>
#include <cstdlib>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <shardflow/k8s/client.hpp>

#include "kube/kube_helpers.hpp"

using namespace shardflow;
using namespace shardflow::kubetest;
using k8s::ApiError;
using k8s::Client;
using k8s::ClientOptions;
using k8s::GoneError;
using k8s::HttpResponse;
using k8s::TransportError;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Quick retries, so that tests measure what they mean to.
ClientOptions fast() {
  ClientOptions o;
  o.qps = 0;
  o.initial_backoff = Duration::from_ms(1);
  o.max_backoff = Duration::from_s(5);
  return o;
}

// A port on 127.0.0.1 where nothing listens.
int closed_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

struct Fixture {
  fs::path dir = scratch("client");
  Certs certs{dir};
  FakeServer server{certs, true};
};

}  // namespace

TEST_CASE("Client: GET with the right CA and the bearer token", "[kube]") {
  Fixture f;
  Client api(creds_for(f.server, f.certs), fast());
  const json v = api.get("/version");
  CHECK(v["gitVersion"] == "v1.36.3-fake");
  const json nodes = api.get("/api/v1/nodes");
  REQUIRE(nodes["items"].size() == 2);
  CHECK(nodes["items"][1]["metadata"]["name"] == "node-1");
  CHECK(api.requests() == 2);
  const auto log = f.server.log("/version");
  REQUIRE(log.size() == 1);
  CHECK(log[0]["authorized"] == true);  // the server saw "Authorization: Bearer <token>"
}

TEST_CASE("Client: a wrong token is a 401 ApiError that does not show the token", "[kube]") {
  Fixture f;
  auto c = creds_for(f.server, f.certs);
  c.token = "wrong-SECRET-token";
  Client api(c, fast());
  try {
    api.get("/version");
    FAIL("no error");
  } catch (const ApiError& e) {
    CHECK(e.status == 401);
    CHECK(e.reason == "Unauthorized");
    CHECK(std::string(e.what()) == "GET /version: 401 Unauthorized: Unauthorized");
  }
  CHECK(api.requests() == 1);  // a 401 is not retried
}

TEST_CASE("Client: an answer that is not a Status is shown in part, with the token redacted", "[kube]") {
  Fixture f;
  f.server.script("/proxy",
                  json::array({{{"status", 400}, {"body", std::string("bad header Bearer ") + kToken}}}));
  Client api(creds_for(f.server, f.certs), fast());
  CHECK_THROWS_WITH(api.get("/proxy"), "GET /proxy: 400: \"bad header Bearer <redacted>\"");
}

TEST_CASE("Client: TLS verification fails with a wrong CA, without retrying, and works with the right one",
          "[kube]") {
  Fixture f;
  auto c = creds_for(f.server, f.certs);
  c.ca_pem = f.certs.other_pem;
  Client wrong(c, fast());
  try {
    wrong.get("/version");
    FAIL("no error");
  } catch (const TransportError& e) {
    const std::string m = e.what();
    CAPTURE(m);
    CHECK(
        m.starts_with("GET /version: TLS: the server's certificate was not verified with the credentials' "
                      "certificate authority ("));
    CHECK(m.find(kToken) == std::string::npos);
  }
  CHECK(wrong.requests() == 1);
  // No CA at all: the system's store, which does not know this self-signed server either; the message
  // says so, not that the credentials' CA failed.
  c.ca_pem.clear();
  try {
    (void)Client(c, fast()).get("/version");
    FAIL("no error");
  } catch (const TransportError& e) {
    CHECK_THAT(e.what(),
               Catch::StartsWith("GET /version: TLS: the server's certificate was not verified with "
                                 "the system's certificate authorities (the kubeconfig gives none: add "
                                 "the cluster's certificate-authority or certificate-authority-data) ("));
  }
  // insecure-skip-tls-verify: no verification.
  c.insecure_skip_tls_verify = true;
  CHECK(Client(c, fast()).get("/version")["major"] == "1");
  CHECK(Client(creds_for(f.server, f.certs), fast()).get("/version")["major"] == "1");
}

TEST_CASE("Client: a client certificate and key from the credentials are presented", "[kube]") {
  Fixture f;
  auto c = creds_for(f.server, f.certs);
  CHECK(Client(c, fast()).get("/whoami")["client_cert_cn"].is_null());
  c.client_cert_pem = f.certs.client_pem;
  c.client_key_pem = f.certs.client_key_pem;
  CHECK(Client(c, fast()).get("/whoami")["client_cert_cn"] == "shardflow-test");
}

TEST_CASE("Client: 500, 502, 503 and 504 are retried until an answer", "[kube]") {
  Fixture f;
  f.server.script("/api/v1/namespaces/default/pods/p",
                  json::array({{{"status", 500}},
                               {{"status", 502}},
                               {{"status", 503}},
                               {{"status", 504}},
                               {{"status", 200}, {"body", {{"kind", "Pod"}}}}}));
  Client api(creds_for(f.server, f.certs), fast());
  CHECK(api.get("/api/v1/namespaces/default/pods/p")["kind"] == "Pod");
  CHECK(api.requests() == 5);
  CHECK(f.server.log("/api/v1/namespaces/default/pods/p").size() == 5);
}

TEST_CASE("Client: after max_retries the last answer is the error", "[kube]") {
  Fixture f;
  f.server.script("/x",
                  json::array({{{"status", 503}}, {{"status", 503}}, {{"status", 503}}, {{"status", 503}}}));
  ClientOptions o = fast();
  o.max_retries = 2;
  Client api(creds_for(f.server, f.certs), o);
  try {
    api.get("/x");
    FAIL("no error");
  } catch (const ApiError& e) {
    CHECK(e.status == 503);
    CHECK(std::string(e.what()) == "GET /x: 503 Scripted: scripted answer 503");
  }
  CHECK(api.requests() == 3);
}

TEST_CASE("Client: 429 with Retry-After waits that long before the retry", "[kube]") {
  Fixture f;
  f.server.script("/limited", json::array({{{"status", 429}, {"retry_after", "1"}}, {{"status", 200}}}));
  Client api(creds_for(f.server, f.certs), fast());
  const auto t0 = Clock::now();
  const HttpResponse r = api.request("GET", "/limited");
  const double took = seconds_since(t0);
  CHECK(r.status == 200);
  CHECK(api.requests() == 2);
  CHECK(took >= 1.0);
  CHECK(took < 4.0);  // generous: the machine may be loaded
  const auto log = f.server.log("/limited");
  REQUIRE(log.size() == 2);
  CHECK(log[1]["t"].get<double>() - log[0]["t"].get<double>() >= 0.95);  // seen by the server too
}

TEST_CASE("Client: a request that times out is retried, and the last timeout is a TransportError", "[kube]") {
  Fixture f;
  f.server.script("/slow", json::array({{{"status", 200}, {"delay", 3}}, {{"status", 200}, {"delay", 3}}}));
  ClientOptions o = fast();
  o.timeout = Duration::from_ms(300);
  o.max_retries = 1;
  Client api(creds_for(f.server, f.certs), o);
  try {
    api.get("/slow");
    FAIL("no error");
  } catch (const TransportError& e) {
    CHECK(std::string(e.what()).starts_with("GET /slow: timed out ("));
    CHECK(std::string(e.what()).ends_with(" (after 1 retries)"));
  }
  CHECK(api.requests() == 2);
}

TEST_CASE("Client: connection refused is retried, then a TransportError", "[kube]") {
  k8s::Credentials c;
  c.server = "https://127.0.0.1:" + std::to_string(closed_port());
  ClientOptions o = fast();
  o.max_retries = 3;
  Client api(c, o);
  CHECK_THROWS_AS(api.get("/version"), TransportError);
  CHECK(api.requests() == 4);
  // Given up at a deadline while retrying: the last try's failure is said, not only the deadline.
  o.max_retries = 100;
  o.initial_backoff = Duration::from_ms(50);
  o.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  Client late(c, o);
  try {
    (void)late.get("/version");
    FAIL("no error");
  } catch (const k8s::Interrupted& e) {
    CHECK_THAT(e.what(), Catch::StartsWith("GET /version: past the deadline; the last try: "));
    CHECK_THAT(e.what(), Catch::Contains("Couldn't connect to server"));
  }
}

TEST_CASE("Client: the rate limiter spaces requests (qps 20, burst 2: 10 requests take >= 0.4 s)", "[kube]") {
  Fixture f;
  ClientOptions o = fast();
  o.qps = 20;
  o.burst = 2;
  Client api(creds_for(f.server, f.certs), o);
  const auto t0 = Clock::now();
  for (int i = 0; i < 10; ++i) api.get("/version");
  CHECK(seconds_since(t0) >= 0.4);
  CHECK(api.requests() == 10);
  const auto log = f.server.log("/version");
  REQUIRE(log.size() == 10);
  CHECK(log[9]["t"].get<double>() - log[0]["t"].get<double>() >= 0.35);  // 8 waits of 50 ms, less jitter
}

TEST_CASE("Client: one rate limit for all threads of a client", "[kube]") {
  Fixture f;
  ClientOptions o = fast();
  o.qps = 20;
  o.burst = 1;
  Client api(creds_for(f.server, f.certs), o);
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 4; ++i)
        if (api.get("/version")["major"] == "1") ++ok;
    });
  for (auto& t : threads) t.join();
  CHECK(ok == 16);
  CHECK(api.requests() == 16);
  CHECK(seconds_since(t0) >= 0.75);  // 15 waits of 50 ms
}

TEST_CASE("Client: create, remove and a Status error", "[kube]") {
  Fixture f;
  Client api(creds_for(f.server, f.certs), fast());
  const json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}}};
  const json created = api.create("/api/v1/namespaces/default/pods", pod);
  CHECK(created["metadata"]["name"] == "p");
  CHECK(created["metadata"]["resourceVersion"] == "1");
  CHECK_NOTHROW(api.remove("/api/v1/namespaces/default/pods/p", "Foreground"));
  const HttpResponse r =
      api.request("DELETE", "/api/v1/namespaces/default/pods/p", R"({"propagationPolicy":"Orphan"})");
  CHECK(json::parse(r.body)["details"]["propagationPolicy"] == "Orphan");
  try {
    api.get("/api/v1/namespaces/default/pods/missing");
    FAIL("no error");
  } catch (const ApiError& e) {
    CHECK(e.status == 404);
    CHECK(e.reason == "NotFound");
    CHECK(e.message == "pods \"missing\" not found");
    CHECK(std::string(e.what()) ==
          "GET /api/v1/namespaces/default/pods/missing: 404 NotFound: pods \"missing\" not found");
  }
  f.server.script("/api/v1/namespaces/default/pods", json::array({{{"status", 409},
                                                                   {"body",
                                                                    {{"kind", "Status"},
                                                                     {"reason", "AlreadyExists"},
                                                                     {"message", "pods \"p\" already exists"},
                                                                     {"code", 409}}}}}));
  CHECK_THROWS_WITH(api.create("/api/v1/namespaces/default/pods", pod),
                    "POST /api/v1/namespaces/default/pods: 409 AlreadyExists: pods \"p\" already exists");
}

namespace {
json event(const std::string& type, const std::string& name, const std::string& rv) {
  return {{"type", type},
          {"object", {{"kind", "Pod"}, {"metadata", {{"name", name}, {"resourceVersion", rv}}}}}};
}
}  // namespace

TEST_CASE("Client: watch streams events in order until the server ends the stream", "[kube]") {
  Fixture f;
  const std::string path = "/api/v1/namespaces/default/pods";
  f.server.watch({{"path", path},
                  {"events", json::array({event("ADDED", "a", "11"),
                                          event("MODIFIED", "a", "12"),
                                          {{"type", "BOOKMARK"},
                                           {"object", {{"metadata", {{"resourceVersion", "13"}}}}}}})},
                  {"split", true},
                  {"delay", 0.02}});
  Client api(creds_for(f.server, f.certs), fast());
  std::vector<std::string> seen;
  api.watch(path + "?resourceVersion=10", [&](const json& ev) {
    seen.push_back(ev["type"].get<std::string>() + " " +
                   ev["object"]["metadata"]["resourceVersion"].get<std::string>());
    return true;
  });
  CHECK(seen == std::vector<std::string>{"ADDED 11", "MODIFIED 12", "BOOKMARK 13"});
  const auto log = f.server.log(path);
  REQUIRE(log.size() == 1);
  CHECK(log[0]["query"] == "resourceVersion=10&watch=1&allowWatchBookmarks=true");
}

TEST_CASE("Client: watch returns when the stream is cut, with the whole events before it", "[kube]") {
  Fixture f;
  f.server.watch({{"path", "/w"},
                  {"events", json::array({event("ADDED", "a", "1"), event("ADDED", "b", "2")})},
                  {"end", "cut"}});
  Client api(creds_for(f.server, f.certs), fast());
  int n = 0;
  api.watch("/w", [&](const json&) { return ++n, true; });
  CHECK(n == 2);
  CHECK(api.requests() == 1);
}

TEST_CASE("Client: watch throws GoneError on 410 and on an ERROR event with code 410", "[kube]") {
  Fixture f;
  Client api(creds_for(f.server, f.certs), fast());
  f.server.script("/gone", json::array({{{"status", 410},
                                         {"body",
                                          {{"kind", "Status"},
                                           {"reason", "Expired"},
                                           {"message", "too old resource version: 1 (5)"},
                                           {"code", 410}}}}}));
  CHECK_THROWS_AS(api.watch("/gone", [](const json&) { return true; }), GoneError);
  f.server.watch({{"path", "/expired"},
                  {"events", json::array({event("ADDED", "a", "1"),
                                          {{"type", "ERROR"},
                                           {"object",
                                            {{"kind", "Status"},
                                             {"code", 410},
                                             {"reason", "Expired"},
                                             {"message", "too old resource version: 1 (5)"}}}}})},
                  {"end", "hold"}});
  int n = 0;
  try {
    api.watch("/expired", [&](const json&) { return ++n, true; });
    FAIL("no error");
  } catch (const GoneError& e) {
    CHECK(std::string(e.what()) == "GET /expired (watch): 410 Expired: too old resource version: 1 (5)");
  }
  CHECK(n == 1);
}

TEST_CASE("Client: watch stops when on_event returns false or when *stop becomes true", "[kube]") {
  Fixture f;
  f.server.watch({{"path", "/held"},
                  {"events", json::array({event("ADDED", "a", "1"), event("ADDED", "b", "2")})},
                  {"end", "hold"},
                  {"hold", 20}});
  Client api(creds_for(f.server, f.certs), fast());
  auto t0 = Clock::now();
  int n = 0;
  api.watch("/held", [&](const json&) { return ++n < 1; });
  CHECK(n == 1);
  CHECK(seconds_since(t0) < 5);

  std::atomic<bool> stop{false};
  n = 0;
  std::thread stopper;
  t0 = Clock::now();
  api.watch(
      "/held",
      [&](const json&) {
        if (++n == 2) stopper = std::thread([&] { stop = true; });
        return true;
      },
      &stop);
  if (stopper.joinable()) stopper.join();
  CHECK(n == 2);
  CHECK(seconds_since(t0) < 6);  // the stream was held for 20 s
}

TEST_CASE("Client: watch retries 503 and 429 before the stream starts", "[kube]") {
  Fixture f;
  f.server.script("/w", json::array({{{"status", 503}}, {{"status", 429}, {"retry_after", "0"}}}));
  f.server.watch({{"path", "/w"}, {"events", json::array({event("ADDED", "a", "1")})}});
  Client api(creds_for(f.server, f.certs), fast());
  int n = 0;
  api.watch("/w", [&](const json&) { return ++n, true; });
  CHECK(n == 1);
  CHECK(api.requests() == 3);
}

// `shardflow k8s status` against the fake server: a Job and a pod just made have no `status` yet (the
// API server adds it with the controllers' first update). Reading it from the const answer was an
// assertion (abort); they are counted as running and Unknown. A list whose items are not a list is an
// answer Kubernetes never sends: exit 2, said so.
TEST_CASE("k8s status: Jobs and pods without a status are counted, items that are not a list are named",
          "[kube]") {
  Fixture f;
  write(f.dir / "kc.yaml",
        "clusters:\n- name: c\n  cluster: {server: '" + f.server.url() +
            "', certificate-authority: server.crt}\nusers:\n- name: u\n  user: {token: " + kToken +
            "}\ncontexts:\n- name: a\n  context: {cluster: c, user: u, namespace: ml}\n"
            "current-context: a\n");
  const fs::path run_dir = f.dir / "run";
  fs::create_directories(run_dir);
  write(run_dir / "run.json", "{\"run_id\": \"abc\", \"namespace\": \"ml\", \"kubeconfig\": \"" +
                                  (f.dir / "kc.yaml").string() +
                                  "\", \"scenario\": \"s\", \"state\": \"finished\", \"seed\": 1, "
                                  "\"started_unix_ns\": 1, \"finished_unix_ns\": 2000000000}\n");
  const auto status = [&] {
    const fs::path out = f.dir / "out.txt", err = f.dir / "err.txt";
    const std::string cmd = std::string(SHARDFLOW_EXE) + " k8s status '" + run_dir.string() + "' >'" +
                            out.string() + "' 2>'" + err.string() + "'";
    const int rc = std::system(cmd.c_str());
    return std::make_tuple(WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), slurp(out), slurp(err));
  };
  // The server's next answers to the Job and the pod lists (their bodies).
  const auto lists = [&](const nlohmann::json& jobs, const nlohmann::json& pods) {
    f.server.script("/apis/batch/v1/namespaces/ml/jobs", {{{"status", 200}, {"body", jobs}}});
    f.server.script("/api/v1/namespaces/ml/pods", {{{"status", 200}, {"body", pods}}});
  };
  const nlohmann::json none = {{"items", nlohmann::json::array()}};
  lists({{"items", {{{"metadata", {{"name", "j"}}}}}}}, {{"items", {{{"metadata", {{"name", "p"}}}}}}});
  const auto [rc, out, err] = status();
  INFO(err);
  CHECK(rc == 0);
  CHECK(out.find("  cluster      1 Jobs (0 complete, 0 failed, 1 running); pods: 1 Unknown\n") !=
        std::string::npos);
  lists({{"items", 5}}, none);
  const auto [rc2, out2, err2] = status();
  CHECK(rc2 == 2);
  CHECK(err2 ==
        run_dir.string() +
            ": unexpected answer from the API server: a list whose items are not a list: {\"items\":5}\n");
  // A list without items (another server's answer) is not taken for an empty one.
  lists({{"status", "ok"}}, none);
  const auto [rc_none, out_none, err_none] = status();
  CHECK(rc_none == 2);
  CHECK(err_none ==
        run_dir.string() +
            ": unexpected answer from the API server: not a list (no `items`): {\"status\":\"ok\"}\n");
  // A run that an error stopped: what stopped it.
  write(run_dir / "run.json",
        "{\"run_id\": \"abc\", \"namespace\": \"ml\", \"kubeconfig\": \"" + (f.dir / "kc.yaml").string() +
            "\", \"scenario\": \"s\", \"state\": \"failed\", \"error\": \"POST x: 403 "
            "Forbidden\", \"seed\": 1, \"started_unix_ns\": 1, \"finished_unix_ns\": 2000000000}\n");
  lists(none, none);
  const auto [rc3, out3, err3] = status();
  INFO(err3);
  CHECK(rc3 == 0);
  CHECK(out3.find("\n  controller   failed (POST x: 403 Forbidden); started ") != std::string::npos);
}
