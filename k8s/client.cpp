#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <shardflow/core/random.hpp>
#include <shardflow/k8s/client.hpp>

#include "curl_api.hpp"

namespace shardflow::k8s {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

constexpr std::size_t kMaxErrorBody = 64 * 1024;  // of a non-2xx answer, kept for the message

// libcurl's functions, loaded on first use (curl_api.hpp says why).
const CurlApi& cu() {
  return curl_api();
}

void global_init() {
  (void)cu();
}

bool is_2xx(long status) {
  return status >= 200 && status < 300;
}
bool retryable_status(long status) {
  return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}
bool retryable_transport(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return true;
    default:
      return false;
  }
}

bool iequals_prefix(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Retry-After as whole seconds; -1 when absent or not a number of seconds (an HTTP date is not used).
long retry_after_seconds(std::string_view v) {
  v = trim(v);
  if (v.empty() || v.size() > 9) return -1;
  long s = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return -1;
    s = s * 10 + (c - '0');
  }
  return s;
}

// Sleeps for `d`, waking early when *stop becomes true.
void sleep_for(Duration d, const std::atomic<bool>* stop) {
  const auto until = Clock::now() + std::chrono::nanoseconds(d.ns());
  while (Clock::now() < until) {
    if (stop && stop->load()) return;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
  }
}

// `own_ca`: the credentials give a certificate authority (else the system's were used).
std::string describe(CURLcode code, const char* errbuf, bool own_ca = true) {
  std::string detail = errbuf && *errbuf ? errbuf : cu().easy_strerror(code);
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
      if (!own_ca)
        return "TLS: the server's certificate was not verified with the system's certificate authorities "
               "(the "
               "kubeconfig gives none: add the cluster's certificate-authority or "
               "certificate-authority-data) (" +
               detail + ")";
      return "TLS: the server's certificate was not verified with the credentials' certificate authority (" +
             detail + ")";
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
      return "TLS: the client certificate or key was not usable (" + detail + ")";
    case CURLE_SSL_CACERT_BADFILE:
      return "TLS: the certificate authority could not be loaded (" + detail + ")";
    case CURLE_SSL_CONNECT_ERROR:
      return "TLS handshake failed (" + detail + ")";
    case CURLE_OPERATION_TIMEDOUT:
      return "timed out (" + detail + ")";
    default:
      return detail;
  }
}

// The part of a non-Status body that goes in a message: one line, at most 200 characters.
std::string snippet(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 200)) out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : ' ');
  if (body.size() > 200) out += "...";
  return std::string(trim(out));
}

struct Transfer {
  std::string body;
  std::string retry_after;
  std::array<char, CURL_ERROR_SIZE> errbuf{};
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  t->body.append(data, size * n);
  return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* retry_after = static_cast<std::string*>(user);
  const std::string_view line(data, size * n);
  if (iequals_prefix(line, "HTTP/")) retry_after->clear();  // a new response (after 100 Continue)
  if (iequals_prefix(line, "Retry-After:")) *retry_after = std::string(trim(line.substr(12)));
  return size * n;
}

class Headers {
 public:
  Headers() = default;
  Headers(const Headers&) = delete;
  Headers& operator=(const Headers&) = delete;
  ~Headers() { cu().slist_free_all(list_); }
  void add(const std::string& h) {
    curl_slist* l = cu().slist_append(list_, h.c_str());
    if (!l) throw std::bad_alloc();
    list_ = l;
  }
  [[nodiscard]] curl_slist* get() const { return list_; }

 private:
  curl_slist* list_ = nullptr;
};

}  // namespace

ApiError::ApiError(std::string_view method, const std::string& path, long status_, std::string reason_,
                   std::string message_)
    : std::runtime_error(std::string(method) + " " + path + ": " + std::to_string(status_) +
                         (reason_.empty() ? "" : " " + reason_) + (message_.empty() ? "" : ": " + message_)),
      status(status_),
      reason(std::move(reason_)),
      message(std::move(message_)) {}

struct Client::Impl {
  Credentials creds;
  ClientOptions opts;
  std::atomic<std::uint64_t> requests{0};

  std::mutex limiter_mu;
  double tokens = 0;
  Clock::time_point refilled = Clock::now();

  std::mutex rng_mu;
  Rng rng;

  std::mutex pool_mu;
  std::vector<CURL*> pool;

  Impl(Credentials c, ClientOptions o) : creds(std::move(c)), opts(o), rng(o.seed) {
    opts.burst = std::max(opts.burst, 1);
    opts.max_retries = std::max(opts.max_retries, 0);
    tokens = opts.burst;
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Ctrl-C (opts.stop) or the deadline: requests end with Interrupted.
  [[nodiscard]] bool given_up() const {
    return (opts.stop != nullptr && opts.stop->load()) || (opts.deadline && Clock::now() >= *opts.deadline);
  }
  // curl's progress callback: a non-zero return ends the transfer (CURLE_ABORTED_BY_CALLBACK).
  static int on_progress(void* impl, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<const Impl*>(impl)->given_up() ? 1 : 0;
  }
  // A retry's wait, cut short when the requests are given up.
  void wait(Duration d) const {
    const auto until = Clock::now() + std::chrono::nanoseconds(d.ns());
    while (Clock::now() < until && !given_up())
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
  }
  ~Impl() {
    for (CURL* h : pool) cu().easy_cleanup(h);
  }

  // Token bucket: takes a token, waiting until there is one. Tokens may go negative: each caller
  // reserves its slot in the queue, so waiters are spaced 1/qps apart whatever thread they are on.
  void wait_for_token() {
    if (opts.qps <= 0) return;
    std::unique_lock lock(limiter_mu);
    const auto now = Clock::now();
    tokens = std::min<double>(opts.burst,
                              tokens + std::chrono::duration<double>(now - refilled).count() * opts.qps);
    refilled = now;
    tokens -= 1;
    const double wait_s = tokens >= 0 ? 0 : -tokens / opts.qps;
    lock.unlock();
    if (wait_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  }

  Duration backoff(int retry, const std::string& retry_after) {
    if (const long s = retry_after_seconds(retry_after); s >= 0)
      return std::min(Duration::from_s(s), opts.max_backoff);
    double d = static_cast<double>(opts.initial_backoff.ns()) * std::ldexp(1.0, std::min(retry, 30));
    d = std::min(d, static_cast<double>(opts.max_backoff.ns()));
    double u = 0;
    {
      const std::lock_guard lock(rng_mu);
      u = rng.uniform();
    }
    return Duration::from_ns(static_cast<std::int64_t>(d * (1.0 + 0.2 * u)));  // up to +20% jitter
  }

  CURL* acquire() {
    {
      const std::lock_guard lock(pool_mu);
      if (!pool.empty()) {
        CURL* h = pool.back();
        pool.pop_back();
        cu().easy_reset(h);  // keeps its connections and TLS sessions
        return h;
      }
    }
    CURL* h = cu().easy_init();
    if (!h) throw std::runtime_error("libcurl: cannot create a handle");
    return h;
  }
  void release(CURL* h) {
    const std::lock_guard lock(pool_mu);
    pool.push_back(h);
  }
  // A handle from the pool for one call, returned when the call ends however it ends.
  struct Lease {
    Impl& im;
    CURL* h;
    explicit Lease(Impl& impl) : im(impl), h(impl.acquire()) {}
    ~Lease() { im.release(h); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
  };

  // Options every request has: URL, method, body, headers (the token), TLS, timeouts.
  void setup(CURL* h, std::string_view method, const std::string& url, const std::string& body,
             const Headers& headers, Transfer& t, bool streaming) const {
    cu().easy_setopt(h, CURLOPT_URL, url.c_str());
    cu().easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    cu().easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
    cu().easy_setopt(h, CURLOPT_ERRORBUFFER, t.errbuf.data());
    cu().easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    cu().easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    cu().easy_setopt(h, CURLOPT_HEADERDATA, &t.retry_after);
    cu().easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    const long timeout_ms = static_cast<long>(std::max<std::int64_t>(opts.timeout.ns() / 1'000'000, 1));
    cu().easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    if (!streaming) cu().easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    if (method == "GET") {
      cu().easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
      cu().easy_setopt(h, CURLOPT_CUSTOMREQUEST, std::string(method).c_str());
      if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
        cu().easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        cu().easy_setopt(h, CURLOPT_COPYPOSTFIELDS, body.c_str());
      }
    }
    if (creds.insecure_skip_tls_verify) {
      cu().easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      cu().easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!creds.ca_pem.empty()) {
      curl_blob ca{const_cast<char*>(creds.ca_pem.data()), creds.ca_pem.size(), CURL_BLOB_COPY};
      cu().easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
      cu().easy_setopt(h, CURLOPT_CAPATH, nullptr);  // only the credentials' CA, not the system's
    }
    if (!creds.client_cert_pem.empty()) {
      curl_blob cert{const_cast<char*>(creds.client_cert_pem.data()), creds.client_cert_pem.size(),
                     CURL_BLOB_COPY};
      curl_blob key{const_cast<char*>(creds.client_key_pem.data()), creds.client_key_pem.size(),
                    CURL_BLOB_COPY};
      cu().easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
      cu().easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
      cu().easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
      cu().easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
  }

  void headers_for(Headers& headers, std::string_view content_type, bool has_body) const {
    headers.add("Accept: application/json");
    if (has_body) headers.add("Content-Type: " + std::string(content_type));
    if (!creds.token.empty()) headers.add("Authorization: Bearer " + creds.token);
    headers.add("Expect:");  // no 100-continue round trip
  }

  [[noreturn]] void throw_api_error(std::string_view method, const std::string& path, long status,
                                    const std::string& body) const {
    std::string reason, message;
    try {
      const json j = json::parse(body);
      if (j.is_object() && j.value("kind", "") == "Status") {
        reason = j.value("reason", "");
        message = j.value("message", "");
      }
    } catch (const json::exception&) {
    }
    if (reason.empty() && message.empty()) message = snippet(body);
    if (!creds.token.empty())  // a server that echoes the header must not put the token in a message
      for (auto p = message.find(creds.token); p != std::string::npos; p = message.find(creds.token))
        message.replace(p, creds.token.size(), "<redacted>");
    if (status == 410) throw GoneError(method, path, status, std::move(reason), std::move(message));
    throw ApiError(method, path, status, std::move(reason), std::move(message));
  }
};

Client::Client(Credentials creds, ClientOptions opts)
    : impl_(std::make_unique<Impl>(std::move(creds), opts)) {
  global_init();
}
Client::~Client() = default;

std::uint64_t Client::requests() const {
  return impl_->requests.load();
}
void Client::set_stop(const std::atomic<bool>* stop) {
  impl_->opts.stop = stop;
}
const std::string& Client::server() const {
  return impl_->creds.server;
}
const std::string& Client::namespace_name() const {
  return impl_->creds.namespace_name;
}

HttpResponse Client::request(std::string_view method, const std::string& path, const std::string& body,
                             std::string_view content_type) {
  Impl& im = *impl_;
  const std::string url = im.creds.server + path;
  Headers headers;
  im.headers_for(headers, content_type, !body.empty());
  const Impl::Lease lease(im);
  CURL* h = lease.h;
  std::string last_failure;  // of the tries so far, for a request given up while retrying
  for (int attempt = 0;; ++attempt) {
    Transfer t;
    cu().easy_reset(h);
    im.setup(h, method, url, body, headers, t, false);
    cu().easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    cu().easy_setopt(h, CURLOPT_WRITEDATA, &t);
    im.wait_for_token();
    ++im.requests;
    if (im.opts.stop != nullptr || im.opts.deadline) {  // a transfer in flight ends when given up
      cu().easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
      cu().easy_setopt(h, CURLOPT_XFERINFOFUNCTION, Impl::on_progress);
      cu().easy_setopt(h, CURLOPT_XFERINFODATA, static_cast<void*>(&im));
    }
    const CURLcode code = cu().easy_perform(h);
    const bool last = attempt >= im.opts.max_retries;
    const auto interrupted = [&] {
      if (im.given_up())
        throw Interrupted(
            std::string(method) + " " + path + ": " +
            (im.opts.stop != nullptr && im.opts.stop->load() ? "interrupted" : "past the deadline") +
            (last_failure.empty() ? "" : "; the last try: " + last_failure));
    };
    interrupted();
    if (code != CURLE_OK) {
      if (!last && retryable_transport(code)) {
        last_failure = describe(code, t.errbuf.data(), !im.creds.ca_pem.empty());
        im.wait(im.backoff(attempt, ""));
        interrupted();
        continue;
      }
      throw TransportError(std::string(method) + " " + path + ": " +
                           describe(code, t.errbuf.data(), !im.creds.ca_pem.empty()) +
                           (attempt > 0 ? " (after " + std::to_string(attempt) + " retries)" : ""));
    }
    HttpResponse r;
    cu().easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    r.body = std::move(t.body);
    r.retry_after = std::move(t.retry_after);
    if (!last && retryable_status(r.status)) {
      last_failure = "HTTP " + std::to_string(r.status);
      im.wait(im.backoff(attempt, r.status == 429 || r.status == 503 ? r.retry_after : ""));
      interrupted();
      continue;
    }
    return r;
  }
}

nlohmann::json Client::get(const std::string& path) {
  const HttpResponse r = request("GET", path);
  if (!is_2xx(r.status)) impl_->throw_api_error("GET", path, r.status, r.body);
  try {
    return json::parse(r.body);
  } catch (const json::exception& e) {
    throw std::runtime_error("GET " + path + ": the answer is not JSON (" + e.what() + ")");
  }
}

nlohmann::json Client::create(const std::string& path, const nlohmann::json& obj) {
  const HttpResponse r = request("POST", path, obj.dump());
  if (!is_2xx(r.status)) impl_->throw_api_error("POST", path, r.status, r.body);
  try {
    return json::parse(r.body);
  } catch (const json::exception& e) {
    throw std::runtime_error("POST " + path + ": the answer is not JSON (" + e.what() + ")");
  }
}

void Client::remove(const std::string& path, const std::string& propagation) {
  const json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", propagation}};
  const HttpResponse r = request("DELETE", path, options.dump());
  if (!is_2xx(r.status)) impl_->throw_api_error("DELETE", path, r.status, r.body);
}

namespace {

struct WatchState {
  CURL* h = nullptr;
  const std::function<bool(const json&)>* on_event = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::string path;
  Transfer t;            // t.body: the answer of a non-2xx status
  std::string line;      // the event being received
  long status = -1;      // known once the first body bytes arrive
  bool stopped = false;  // by on_event or *stop
  std::exception_ptr error;
};

// Handles one complete line of a watch stream; false to end the stream.
bool handle_line(WatchState& w, std::string_view line) {
  line = trim(line);
  if (line.empty()) return true;
  json ev;
  try {
    ev = json::parse(line);
  } catch (const json::exception& e) {
    w.error = std::make_exception_ptr(
        std::runtime_error("GET " + w.path + " (watch): an event is not JSON (" + e.what() + ")"));
    return false;
  }
  if (ev.is_object() && ev.value("type", "") == "ERROR") {
    const json obj = ev.contains("object") ? ev["object"] : json::object();
    long code = 0;
    std::string reason, message;
    try {
      code = obj.value("code", 0L);
      reason = obj.value("reason", "");
      message = obj.value("message", "");
    } catch (const json::exception&) {
    }
    if (code == 410)
      w.error = std::make_exception_ptr(GoneError("GET", w.path + " (watch)", code, reason, message));
    else
      w.error = std::make_exception_ptr(ApiError("GET", w.path + " (watch)", code, reason, message));
    return false;
  }
  try {
    if (!(*w.on_event)(ev)) {
      w.stopped = true;
      return false;
    }
  } catch (...) {
    w.error = std::current_exception();
    return false;
  }
  return true;
}

std::size_t on_watch_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* w = static_cast<WatchState*>(user);
  const std::size_t total = size * n;
  if (w->status < 0) cu().easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->status);
  if (!is_2xx(w->status)) {
    if (w->t.body.size() < kMaxErrorBody) w->t.body.append(data, std::min(total, kMaxErrorBody));
    return total;
  }
  std::string_view chunk(data, total);
  while (!chunk.empty()) {
    const auto nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      w->line.append(chunk);
      break;
    }
    w->line.append(chunk.substr(0, nl));
    chunk.remove_prefix(nl + 1);
    std::string line = std::move(w->line);
    w->line.clear();
    if (!handle_line(*w, line)) return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  return total;
}

int on_watch_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* w = static_cast<WatchState*>(user);
  if (w->stop && w->stop->load()) {
    w->stopped = true;
    return 1;  // aborts the transfer
  }
  return 0;
}

}  // namespace

void Client::watch(const std::string& path, const std::function<bool(const nlohmann::json&)>& on_event,
                   const std::atomic<bool>* stop) {
  Impl& im = *impl_;
  const std::string url = im.creds.server + path + (path.find('?') == std::string::npos ? "?" : "&") +
                          "watch=1&allowWatchBookmarks=true";
  Headers headers;
  im.headers_for(headers, "", false);
  const Impl::Lease lease(im);
  CURL* h = lease.h;
  for (int attempt = 0;; ++attempt) {
    if (stop && stop->load()) return;
    WatchState w;
    w.h = h;
    w.on_event = &on_event;
    w.stop = stop;
    w.path = path;
    cu().easy_reset(h);
    im.setup(h, "GET", url, {}, headers, w.t, true);
    cu().easy_setopt(h, CURLOPT_WRITEFUNCTION, on_watch_body);
    cu().easy_setopt(h, CURLOPT_WRITEDATA, &w);
    cu().easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    cu().easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_watch_progress);
    cu().easy_setopt(h, CURLOPT_XFERINFODATA, &w);
    im.wait_for_token();
    ++im.requests;
    const CURLcode code = cu().easy_perform(h);
    if (w.error) std::rethrow_exception(w.error);
    if (w.stopped) return;
    long status = 0;
    cu().easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    const bool last = attempt >= im.opts.max_retries;
    if (status == 0) {
      // No answer at all: connecting failed.
      if (!last && retryable_transport(code)) {
        sleep_for(im.backoff(attempt, ""), stop);
        continue;
      }
      throw TransportError("GET " + path +
                           " (watch): " + describe(code, w.t.errbuf.data(), !im.creds.ca_pem.empty()) +
                           (attempt > 0 ? " (after " + std::to_string(attempt) + " retries)" : ""));
    }
    if (!is_2xx(status)) {
      if (!last && retryable_status(status)) {
        sleep_for(im.backoff(attempt, status == 429 || status == 503 ? w.t.retry_after : ""), stop);
        continue;
      }
      im.throw_api_error("GET", path + " (watch)", status, w.t.body);
    }
    // The stream ended: closed by the server (CURLE_OK) or cut. A last line without a newline counts.
    if (code == CURLE_OK && !w.line.empty()) {
      std::string line = std::move(w.line);
      handle_line(w, line);
      if (w.error) std::rethrow_exception(w.error);
    }
    return;
  }
}

json list_items(const json& list) {
  if (!list.is_object() || !list.contains("items"))
    throw UnexpectedAnswer("not a list (no `items`): " + list.dump().substr(0, 100));
  const json items = list["items"].is_null() ? json::array() : list["items"];
  if (!items.is_array())
    throw UnexpectedAnswer("a list whose items are not a list: " + list.dump().substr(0, 100));
  for (const json& i : items)
    if (!i.is_object())
      throw UnexpectedAnswer("a list item that is not an object: " + i.dump().substr(0, 100));
  return items;
}

}  // namespace shardflow::k8s
