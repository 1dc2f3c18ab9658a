// A small client for the Kubernetes API server's REST API, on libcurl.
//
//   k8s::Client api(k8s::load_kubeconfig("", ""));
//   nlohmann::json nodes = api.get("/api/v1/nodes");
//   api.create("/api/v1/namespaces/default/pods", pod);
//   api.watch("/api/v1/namespaces/default/pods?resourceVersion=" + rv,
//             [&](const nlohmann::json& ev) { ...; return true; }, &stop);
//
// All calls of one Client share a token-bucket rate limit (qps, burst) and may come from any thread.
// A request is retried, up to max_retries times, with exponential backoff plus jitter (from a seeded
// RNG) after 429 Too Many Requests (waiting Retry-After seconds when the server says), 500, 502, 503, 504,
// a timeout or a connection error. Retries apply to every method: a POST retried after a 5xx or a
// timeout that the server did carry out answers 409 AlreadyExists, which the caller must expect.
// TLS is verified against the credentials' CA (or the system's CA store when they have none) unless
// they say insecure_skip_tls_verify. Messages name the method, path, status and the server's Status
// message; never a header, token, key or certificate.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <shardflow/core/units.hpp>
#include <shardflow/k8s/kubeconfig.hpp>

namespace shardflow::k8s {

struct ClientOptions {
  double qps = 50;  // sustained requests per second; <= 0: unlimited
  int burst = 100;  // requests that may go at once after a quiet period (at least 1)
  int max_retries = 6;
  Duration timeout = Duration::from_s(30);            // per attempt; for watch, only to connect
  Duration initial_backoff = Duration::from_ms(200);  // doubled per retry, up to max_backoff
  Duration max_backoff = Duration::from_s(10);        // also caps a Retry-After
  std::uint64_t seed = 1;                             // the backoff jitter's RNG
  /// When set and true (Ctrl-C), a request in flight or waiting to retry ends at once with Interrupted.
  const std::atomic<bool>* stop = nullptr;
  /// Past this time too (a command's --timeout).
  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt;
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header, if any
};

/// The server answered with a non-2xx status. what(): "GET /api/v1/nodes/x: 404 NotFound: nodes "x" not
/// found".
class ApiError : public std::runtime_error {
 public:
  ApiError(std::string_view method, const std::string& path, long status, std::string reason,
           std::string message);
  long status;
  std::string reason;   // the Status object's reason ("NotFound", "AlreadyExists", ...); may be empty
  std::string message;  // the Status object's message (or the start of a body that is not a Status)
};

/// 410 Gone, as an answer or as a watch ERROR event: the resourceVersion is too old; list again.
class GoneError : public ApiError {
 public:
  using ApiError::ApiError;
};

/// The request got no HTTP answer (TLS failure, connection refused, timeout), after any retries.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An answer of the API server that is not what Kubernetes sends (another server, a proxy's page, a list
/// without `items`). what(): "unexpected answer from the API server: " and what was wrong.
class UnexpectedAnswer : public std::runtime_error {
 public:
  explicit UnexpectedAnswer(const std::string& what)
      : std::runtime_error("unexpected answer from the API server: " + what) {}
};

/// A list answer's items ([] when it has none, as `items: null`); an answer without `items`, or whose
/// items are not a list of objects, is an UnexpectedAnswer (iterated as it came, a server answering
/// {"status": "ok"} to everything was a cluster with nothing in it).
nlohmann::json list_items(const nlohmann::json& list);

/// A request was given up because ClientOptions::stop became true (Ctrl-C) or its deadline passed.
class Interrupted : public TransportError {
 public:
  using TransportError::TransportError;
};

class Client {
 public:
  explicit Client(Credentials creds, ClientOptions opts = {});
  ~Client();
  /// Changes ClientOptions::stop for the requests made from now on (nullptr: none is interrupted).
  void set_stop(const std::atomic<bool>* stop);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// One request (with retries) to server + `path`; any status is returned, a transport failure throws
  /// TransportError.
  HttpResponse request(std::string_view method, const std::string& path, const std::string& body = {},
                       std::string_view content_type = "application/json");
  /// GET; throws ApiError (GoneError for 410) on a non-2xx answer.
  nlohmann::json get(const std::string& path);
  /// POST `obj`; returns the created object; throws ApiError on a non-2xx answer.
  nlohmann::json create(const std::string& path, const nlohmann::json& obj);
  /// DELETE with propagationPolicy `propagation` ("Background", "Foreground", "Orphan"); throws ApiError
  /// on a non-2xx answer (404 included).
  void remove(const std::string& path, const std::string& propagation = "Background");
  /// Streams GET path + watch=1&allowWatchBookmarks=true (put resourceVersion=... in `path`), calling
  /// on_event with each event ({"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK", "object": {...}}).
  /// Returns when the server ends or cuts the stream, when on_event returns false, or (within about a
  /// second) when *stop becomes true. Throws GoneError on 410 or an ERROR event with code 410 (list
  /// again), ApiError on another ERROR event or non-2xx answer. Connecting is retried as request() is.
  void watch(const std::string& path, const std::function<bool(const nlohmann::json&)>& on_event,
             const std::atomic<bool>* stop = nullptr);
  /// Requests sent so far, retries included.
  [[nodiscard]] std::uint64_t requests() const;
  [[nodiscard]] const std::string& server() const;
  [[nodiscard]] const std::string& namespace_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardflow::k8s
