// Where the Kubernetes API server is and how to authenticate to it: a kubeconfig file (as kubectl reads it)
// or the service account of the pod shardflow runs in.
//
//   Credentials c = k8s::load_kubeconfig("", "");           // $KUBECONFIG or ~/.kube/config, current-context
//   Credentials c = k8s::load_kubeconfig("kc.yaml", "dev");  // one file, context "dev"
//   Credentials c = k8s::in_cluster_credentials();
//
// Every problem is an InputError naming the file, line, column and field, for example
//   kc.yaml:9:14: contexts[0].context.cluster: no cluster named "prod" (clusters: dev, test)
// No message ever contains a token or a key (nor the contents of a file that holds one).
#pragma once

#include <string>
#include <string_view>

namespace shardflow::k8s {

/// Everything needed to talk to one API server. Holds secrets: never print or log it.
struct Credentials {
  std::string server;                     // "https://127.0.0.1:6443" (no trailing slash)
  std::string ca_pem;                     // the CA bundle to verify the server with; empty: the system's
  bool insecure_skip_tls_verify = false;  // only when the kubeconfig says so
  std::string client_cert_pem, client_key_pem;  // both or neither
  std::string token;                            // bearer token; empty: none
  std::string namespace_name = "default";       // the context's namespace
  std::string context;                          // the context used ("" in-cluster)
  std::string source;                           // the file the context came from, or "in-cluster"
  /// The kubeconfig files read, absolute, ':'-separated as $KUBECONFIG lists them ("" in-cluster): what a
  /// later command (`k8s cleanup --kubeconfig`, `run --resume`) gives to read the same ones.
  std::string files;
};

/// Reads a kubeconfig as kubectl does. `path` "" means $KUBECONFIG (a colon-separated list, merged as
/// kubectl merges: for each named cluster, user and context the first file that defines it wins;
/// current-context comes from the first file that sets it; files of the list that do not exist are
/// skipped), or ~/.kube/config when $KUBECONFIG is unset or empty. A `path` that is no file but holds ':'
/// is such a list too (Credentials::files, recorded by a run). `context` "" means current-context.
///
/// Supported: cluster `server`, `certificate-authority` (a file; a relative path is resolved against the
/// directory of the kubeconfig that names it), `certificate-authority-data` (base64),
/// `insecure-skip-tls-verify`; user `client-certificate`/`client-certificate-data`,
/// `client-key`/`client-key-data`, `token`, `tokenFile`; context `cluster`, `user`, `namespace`.
/// `exec`, `auth-provider`, `username`/`password`, impersonation (`as`...), `tls-server-name` and
/// `proxy-url` are reported as not supported (only in the cluster and user that the context uses).
Credentials load_kubeconfig(const std::string& path, const std::string& context);

/// The pod's service account: $KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT, and `token`,
/// `ca.crt` and `namespace` (optional, else "default") in `sa_dir`.
Credentials in_cluster_credentials(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

/// Standard base64 (RFC 4648, padded; line breaks are skipped). Throws std::invalid_argument saying at
/// which character it is not valid, never what the text is.
std::string decode_base64(std::string_view text);

}  // namespace shardflow::k8s
