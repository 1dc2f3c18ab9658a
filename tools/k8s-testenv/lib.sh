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
apt_install() { # apt_install [-t RELEASE] [--force] PKG...: install what is missing (--force: install/upgrade anyway)
  local target=() force=0
  if [ "${1:-}" = -t ]; then target=(-t "$2"); shift 2; fi
  if [ "${1:-}" = --force ]; then force=1; shift; fi
  local missing=() p
  for p in "$@"; do
    if [ $force = 1 ] || ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then missing+=("$p"); fi
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
  local v gobin="" g
  export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -buildvcs=false"
  if command -v go >/dev/null; then
    v=$(go_version_of go)
    if [ -n "$v" ] && version_ge "$v" "$GO_MIN_VERSION"; then GO=(go); return 0; fi
    log "go ${v:-?} ($(command -v go)) is older than $GO_MIN_VERSION"
    version_ge "${v:-0}" 1.21 && gobin=$(command -v go)
  else
    log "no go on PATH"
  fi
  # A go >= 1.21 can fetch a newer toolchain as a module through the proxy.
  if [ -z "$gobin" ]; then
    # Debian's own: golang-1.X packages put go in /usr/lib/go-1.X/bin.
    for g in $(ls -d /usr/lib/go-1.*/bin/go 2>/dev/null | sort -V -r); do
      v=$(go_version_of "$g"); if [ -n "$v" ] && version_ge "$v" 1.21; then gobin=$g; break; fi
    done
  fi
  if [ -z "$gobin" ]; then
    if [ -r /etc/os-release ] && grep -q '^VERSION_CODENAME=bookworm' /etc/os-release; then
      if ! grep -rqs '^deb .*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        log "adding the bookworm-backports apt source"
        echo 'deb http://deb.debian.org/debian bookworm-backports main' \
          | as_root tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
        _apt_updated=0
      fi
      # Also when bookworm's golang-go (1.19) is installed: upgrade it.
      apt_install -t bookworm-backports --force golang-go
    else
      apt_install golang-go
    fi
    hash -r
    for g in $(ls -d /usr/lib/go-1.*/bin/go 2>/dev/null | sort -V -r) $(command -v go || true); do
      v=$(go_version_of "$g"); if [ -n "$v" ] && version_ge "$v" 1.21; then gobin=$g; break; fi
    done
    [ -n "$gobin" ] || die "installed golang-go, but found no go >= 1.21 (needed to fetch $GO_TOOLCHAIN)"
  fi
  log "using $GO_TOOLCHAIN through GOTOOLCHAIN with $gobin (fetched once through the Go module proxy)"
  export GOTOOLCHAIN=$GO_TOOLCHAIN
  local out
  if ! out=$("$gobin" version 2>&1); then
    case "$out" in *x509*|*certificate*)
      out+=$'\n(TLS to the Go module proxy failed: if this machine reaches it through a TLS-intercepting proxy, install that CA under /usr/local/share/ca-certificates and run update-ca-certificates)' ;;
    esac
    die "GOTOOLCHAIN=$GO_TOOLCHAIN $gobin version failed: $out"
  fi
  v=$(go_version_of "$gobin")
  [ -n "$v" ] && version_ge "$v" "$GO_MIN_VERSION" || die "GOTOOLCHAIN=$GO_TOOLCHAIN did not give a go >= $GO_MIN_VERSION (got '${v:-nothing}')"
  GO=("$gobin")
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
