#include "curl_api.hpp"

#include <dlfcn.h>
#include <mutex>
#include <stdexcept>
#include <string>

namespace shardflow::k8s {
namespace {

template <typename F>
void resolve(void* lib, const char* name, F& slot) {
  void* sym = dlsym(lib, name);
  if (!sym)
    throw std::runtime_error(std::string("libcurl.so.4 has no ") + name +
                             " (libcurl 7.71 or newer is needed)");
  slot = reinterpret_cast<F>(sym);
}

CurlApi load() {
  // RTLD_LOCAL: nothing else in the process sees its symbols; the handle stays open for the process's life.
  void* lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("the Kubernetes backend needs libcurl, which cannot be loaded (") +
                             (why ? why : "libcurl.so.4: not found") +
                             "); install it: apt-get install libcurl4");
  }
  CurlApi api{};
  resolve(lib, "curl_global_init", api.global_init);
  resolve(lib, "curl_easy_init", api.easy_init);
  resolve(lib, "curl_easy_setopt", api.easy_setopt);
  resolve(lib, "curl_easy_perform", api.easy_perform);
  resolve(lib, "curl_easy_getinfo", api.easy_getinfo);
  resolve(lib, "curl_easy_reset", api.easy_reset);
  resolve(lib, "curl_easy_cleanup", api.easy_cleanup);
  resolve(lib, "curl_easy_strerror", api.easy_strerror);
  resolve(lib, "curl_slist_append", api.slist_append);
  resolve(lib, "curl_slist_free_all", api.slist_free_all);
  const CURLcode code = api.global_init(CURL_GLOBAL_DEFAULT);
  if (code != CURLE_OK)
    throw std::runtime_error(std::string("libcurl cannot start: ") + api.easy_strerror(code));
  return api;
}

}  // namespace

const CurlApi& curl_api() {
  // A function-local static: initialized once, thread-safely; a throw leaves it for the next call to retry.
  static const CurlApi api = load();
  return api;
}

}  // namespace shardflow::k8s
