# shellcheck shell=bash
# Shared by up, down, build and smoke-test. Source it; do not run it.
#
# Pins live in kube/go.mod (Kubernetes + etcd) and kwok/go.mod (KWOK); the
# numbers below only stamp the binaries' reported versions and must match.

TESTENV_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

KUBE_VERSION=v1.36.3   # k8s.io/kubernetes in kube/go.mod
ETCD_VERSION=v3.6.16   # go.etcd.io/etcd/server/v3 in kube/go.mod
KWOK_VERSION=v0.8.0    # sigs.k8s.io/kwok in kwok/go.mod
# Toolchain fetched through the Go module proxy when the local go is older
# than the go.mod files need (go 1.26.0).
GO_MIN_VERSION=1.26.0
GO_TOOLCHAIN=go1.26.8
# Bump when the build recipe changes so that old caches are not reused.
BUILD_RECIPE=2

CACHE_ROOT="${SHARDFLOW_CACHE:-${HOME:-/root}/.cache/shardflow}/k8s-testenv"
STATE_ROOT="${SHARDFLOW_K8S_STATE:-$CACHE_ROOT/run}"
# All clusters of this tool use one KWOK work dir, outside the repo.
export KWOK_WORKDIR="$CACHE_ROOT/kwok-workdir"

log() { printf '[k8s-testenv] %s\n' "$*" >&2; }
die() { printf '[k8s-testenv] ERROR: %s\n' "$*" >&2; exit 1; }

# as_root CMD...: run CMD as root, through sudo when needed.
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

_apt_updated=0
apt_install() { # apt_install [-t RELEASE] PKG...: install what is missing
  local target=()
  if [ "${1:-}" = -t ]; then target=(-t "$2"); shift 2; fi
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get to install them"
  if [ $_apt_updated = 0 ]; then
    log "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null || die "apt-get update failed"
    _apt_updated=1
  fi
  log "apt-get install ${target[*]} ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${target[@]}" "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

# Tools the scripts themselves use (a minimal Debian lacks some of them).
ensure_base_tools() {
  local need=()
  command -v ps >/dev/null || need+=(procps)
  [ -e /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
  command -v flock >/dev/null || need+=(util-linux)
  command -v sha256sum >/dev/null || need+=(coreutils)
  [ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
}

version_ge() { # version_ge A B: A >= B (dotted numbers)
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

go_version_of() { # prints e.g. 1.26.8, or nothing
  { "$@" env GOVERSION 2>/dev/null || true; } | sed -n 's/^go\([0-9][0-9.]*\).*/\1/p'
}

# ensure_go: sets GO (a command array) to a go >= GO_MIN_VERSION.
ensure_go() {
  local v
  export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -buildvcs=false"
  if command -v go >/dev/null; then
    v=$(go_version_of go)
    if [ -n "$v" ] && version_ge "$v" "$GO_MIN_VERSION"; then GO=(go); return 0; fi
    log "go ${v:-?} is older than $GO_MIN_VERSION"
  else
    log "no go on PATH"
  fi
  # A go >= 1.21 can fetch a newer toolchain as a module through the proxy.
  if ! command -v go >/dev/null || ! version_ge "$(go_version_of go)" 1.21; then
    if [ -r /etc/os-release ] && grep -q '^VERSION_CODENAME=bookworm' /etc/os-release; then
      if ! grep -rqs '^deb .*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        log "adding the bookworm-backports apt source"
        echo 'deb http://deb.debian.org/debian bookworm-backports main' \
          | as_root tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
        _apt_updated=0
      fi
      apt_install -t bookworm-backports golang-go
    else
      apt_install golang-go
    fi
    hash -r
  fi
  command -v go >/dev/null || die "could not install go"
  v=$(go_version_of go)
  version_ge "$v" 1.21 || die "go $v cannot fetch toolchains (needs >= 1.21); install go >= $GO_MIN_VERSION"
  log "using $GO_TOOLCHAIN through GOTOOLCHAIN (fetched once through the Go module proxy)"
  export GOTOOLCHAIN=$GO_TOOLCHAIN
  local out
  if ! out=$(go version 2>&1); then
    case "$out" in *x509*|*certificate*)
      out+=$'\n(TLS to the Go module proxy failed: if this machine reaches it through a TLS-intercepting proxy, install that CA under /usr/local/share/ca-certificates and run update-ca-certificates)' ;;
    esac
    die "GOTOOLCHAIN=$GO_TOOLCHAIN go version failed: $out"
  fi
  v=$(go_version_of go)
  [ -n "$v" ] && version_ge "$v" "$GO_MIN_VERSION" || die "GOTOOLCHAIN=$GO_TOOLCHAIN did not give a go >= $GO_MIN_VERSION (got '${v:-nothing}')"
  GO=(go)
}

# The cache key: everything that decides what the binaries are.
pins_hash() {
  (
    cd "$TESTENV_DIR"
    printf 'recipe=%s kube=%s etcd=%s kwok=%s go>=%s\n' "$BUILD_RECIPE" "$KUBE_VERSION" "$ETCD_VERSION" "$KWOK_VERSION" "$GO_MIN_VERSION"
    cat kube/go.mod kube/go.sum kube/etcd/main.go kwok/go.mod kwok/go.sum
  ) | sha256sum | cut -c1-16
}

BIN_NAMES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwokctl)

bin_dir() { echo "$CACHE_ROOT/$(pins_hash)/bin"; }

bins_present() {
  local d=$1 b
  for b in "${BIN_NAMES[@]}"; do [ -x "$d/$b" ] || return 1; done
}

# cluster_pid_alive PID: PID is a live (not zombie) process of one of our binaries.
cluster_pid_alive() {
  local exe
  [ -d "/proc/$1" ] || return 1
  exe=$( (tr '\0' ' ' <"/proc/$1/cmdline") 2>/dev/null | cut -d' ' -f1)
  case "$exe" in
    */etcd|*/kube-apiserver|*/kube-controller-manager|*/kube-scheduler|*/kwok|*/kwok-controller) return 0 ;;
  esac
  return 1
}
