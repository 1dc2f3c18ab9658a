// libcurl, loaded when the Kubernetes backend first talks to a server rather than when shardflow starts.
//
// Linking libcurl pulls about 30 shared libraries (TLS, Kerberos, LDAP, IDN, ...) into every process:
// the dynamic loader's work made `shardflow --version` 3.4x as slow, and every `simulate` paid for a
// network stack it never used. So the k8s client reaches libcurl through this table, filled by dlopen on
// first use; only the headers are needed at build time.
//
//   const CurlApi& c = curl_api();   // throws std::runtime_error when libcurl.so.4 cannot be loaded
//   CURL* h = c.easy_init();
#pragma once

#include <curl/curl.h>

namespace shardflow::k8s {

struct CurlApi {
  CURLcode (*global_init)(long flags);
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL* h, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL* h);
  CURLcode (*easy_getinfo)(CURL* h, CURLINFO info, ...);
  void (*easy_reset)(CURL* h);
  void (*easy_cleanup)(CURL* h);
  const char* (*easy_strerror)(CURLcode code);
  curl_slist* (*slist_append)(curl_slist* list, const char* text);
  void (*slist_free_all)(curl_slist* list);
};

/// The loaded table (once per process; curl_global_init already called). Throws std::runtime_error naming
/// the library and the package that provides it when it cannot be loaded.
const CurlApi& curl_api();

}  // namespace shardflow::k8s
