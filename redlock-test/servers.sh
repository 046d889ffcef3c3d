#!/usr/bin/env bash
# Fetches and prepares the newer Redis-compatible servers the suites also run on, from Debian's own archive:
#
#   valkey-8.0  valkey-tools 8.0.*  from bookworm-backports
#   valkey-9.1  valkey-tools 9.1.*  from sid
#   redis-8.6   redis-tools 8.6.*   from experimental
#
# Usage: redlock-test/servers.sh [NAME...]      (no name: all three)
# Prints one line per server, "NAME<TAB>DIR": put DIR first on PATH and the test kit finds that server as
# redis-server, e.g.  PATH="$dir:$PATH" mvn -B -ntp verify
#
# In these packages the server is the multi-call binary of the -tools package (valkey-check-rdb, redis-check-rdb),
# which serves when its argv[0] ends in -server. Every server runs through the loader and libraries of sid (glibc,
# libstdc++, jemalloc, OpenSSL, ...), fetched beside it, so it needs nothing from the system's libraries and runs on
# bookworm, whose glibc is older than the newer packages need. DIR/redis-server is a small script that does that.
#
# Nothing of the system's apt setup is read for packages or changed: apt runs on a private sources list, lists and
# cache under the cache directory; only the mirror and its keyring are taken from the system's own Debian entry.
# The cache directory is REDLOCK_SERVERS_DIR, or else $XDG_CACHE_HOME/redlock-servers (~/.cache/redlock-servers);
# a prepared server is reused as long as its version is still the one asked for.
set -euo pipefail

# NAME SUITE PACKAGE VERSION-PREFIX PROGRAM (the name the multi-call binary must be started by)
SERVERS=(
  "valkey-8.0 bookworm-backports valkey-tools 8.0. valkey"
  "valkey-9.1 sid valkey-tools 9.1. valkey"
  "redis-8.6 experimental redis-tools 8.6. redis"
)
# sid's loader and the libraries the servers link (libssl3t64 brings libzstd1 and zlib1g along)
RUNTIME=(libc6 libstdc++6 libgcc-s1 libatomic1 liblzf1 libjemalloc2 libssl3t64 libzstd1 zlib1g libsystemd0)
MULTIARCH=x86_64-linux-gnu

fail() {
  echo "servers.sh: $*" >&2
  exit 1
}

[[ "$(uname -m)" == x86_64 ]] || fail "these packages are prepared for x86_64 only, not $(uname -m)"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || fail "needs apt-get and dpkg-deb (a Debian machine)"

cache=${REDLOCK_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/redlock-servers}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# The Debian mirror and keyring of the system's own entry for its release (deb822 .sources or one-line .list).
system_mirror() {
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$file" ]] || continue
    awk 'BEGIN { RS = ""; FS = "\n" }
      {
        uris = ""; suites = ""; key = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { uris = $i; sub(/^URIs:[ \t]*/, "", uris) }
          if ($i ~ /^Suites:/) { suites = " " $i " "; sub(/^ Suites:/, "", suites) }
          if ($i ~ /^Signed-By:/) { key = $i; sub(/^Signed-By:[ \t]*/, "", key) }
        }
        if (suites ~ /[ \t][a-z]+[ \t]/ && suites !~ /security/ && uris ~ /debian\/?$/) {
          split(uris, first, " "); print first[1], (key == "" ? "-" : key); exit
        }
      }' "$file"
  done | head -n 1
  if [[ -f /etc/apt/sources.list ]]; then
    awk '$1 == "deb" && $0 !~ /security/ {
        key = "-"; url = ""
        for (i = 2; i <= NF; i++) {
          if ($i ~ /^\[/) { if (match($i, /signed-by=[^] ]*/)) key = substr($i, RSTART + 10, RLENGTH - 10); continue }
          if ($i ~ /\]$/) continue
          url = $i; break
        }
        if (url ~ /debian\/?$/) { print url, key; exit }
      }' /etc/apt/sources.list
  fi
}

read -r mirror keyring < <(system_mirror | head -n 1) || true
[[ -n "${mirror:-}" ]] || fail "no Debian mirror in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
[[ "${keyring:--}" != - ]] || keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r "$keyring" ]] || fail "cannot read the Debian archive keyring $keyring"

apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
{
  for suite in sid experimental bookworm-backports; do
    echo "deb [signed-by=$keyring] $mirror $suite main"
  done
} >"$apt_dir/sources.list"
apt_options=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o Dir::State::status=/dev/null
  -o Debug::NoLocking=1 -o "APT::Sandbox::User=$(id -un)" -o APT::Architecture=amd64
)
lists_ready=false

update_lists() {
  $lists_ready && return
  echo "servers.sh: reading the package lists of sid, experimental and bookworm-backports from $mirror" >&2
  apt-get "${apt_options[@]}" -qq update >&2 || fail "apt-get update on the private sources list failed"
  lists_ready=true
}

# The version of PACKAGE that SUITE offers now.
suite_version() {
  local suite=$1 package=$2
  apt-cache "${apt_options[@]}" show "$package/$suite" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1
}

# Downloads PACKAGE=VERSION (or PACKAGE/SUITE) and unpacks it into DIR.
unpack() {
  local spec=$1 dir=$2 work
  work=$(mktemp -d "$cache/download.XXXXXX")
  (cd "$work" && apt-get "${apt_options[@]}" -qq download "$spec" >&2) || { rm -rf "$work"; fail "could not download $spec"; }
  dpkg-deb -x "$work"/*.deb "$dir"
  rm -rf "$work"
}

prepare_runtime() {
  local runtime="$cache/runtime-sid" package
  [[ -x "$runtime/usr/lib/$MULTIARCH/ld-linux-x86-64.so.2" && -f "$runtime/.complete" ]] && { echo "$runtime"; return; }
  update_lists
  rm -rf "$runtime"
  mkdir -p "$runtime"
  for package in "${RUNTIME[@]}"; do
    unpack "$package/sid" "$runtime"
  done
  touch "$runtime/.complete"
  echo "$runtime"
}

# Prepares one server; prints "NAME<TAB>DIR".
prepare() {
  local name=$1 suite=$2 package=$3 prefix=$4 program=$5
  local home="$cache/$name" version runtime libs
  if [[ -x "$home/bin/redis-server" && -f "$home/version" ]] && [[ "$(cat "$home/version")" == "$prefix"* ]]; then
    printf '%s\t%s\n' "$name" "$home/bin"
    return
  fi
  update_lists
  version=$(suite_version "$suite" "$package")
  [[ -n "$version" ]] || fail "$suite offers no $package any more; change SERVERS in $0"
  # Debian versions may start with an epoch ("5:8.6.3-1")
  [[ "${version#*:}" == "$prefix"* ]] || fail "$suite now offers $package $version, not ${prefix}x: the archive has moved on; change SERVERS in $0 (and the README's server table)"
  runtime=$(prepare_runtime)
  rm -rf "$home"
  mkdir -p "$home/bin" "$home/multicall"
  unpack "$package=$version" "$home/package"
  ln -s "../package/usr/bin/$program-check-rdb" "$home/multicall/$program-server"
  libs="$runtime/usr/lib/$MULTIARCH:$runtime/lib/$MULTIARCH"
  # The multi-call binary serves when started by a name ending in -server; the loader is sid's.
  cat >"$home/bin/redis-server" <<EOF
#!/bin/sh
# $package $version (Debian $suite) run through sid's loader; prepared by redlock-test/servers.sh
exec "$runtime/usr/lib/$MULTIARCH/ld-linux-x86-64.so.2" --library-path "$libs" "$home/multicall/$program-server" "\$@"
EOF
  cat >"$home/bin/redis-cli" <<EOF
#!/bin/sh
exec "$runtime/usr/lib/$MULTIARCH/ld-linux-x86-64.so.2" --library-path "$libs" "$home/package/usr/bin/$program-cli" "\$@"
EOF
  chmod +x "$home/bin/redis-server" "$home/bin/redis-cli"
  "$home/bin/redis-server" --version >/dev/null || fail "$name does not start: $("$home/bin/redis-server" --version 2>&1 | head -n 3)"
  echo "${version#*:}" >"$home/version"
  printf '%s\t%s\n' "$name" "$home/bin"
}

wanted=("$@")
[[ ${#wanted[@]} -gt 0 ]] || wanted=(valkey-8.0 valkey-9.1 redis-8.6)
for want in "${wanted[@]}"; do
  found=false
  for server in "${SERVERS[@]}"; do
    read -r name suite package prefix program <<<"$server"
    if [[ "$name" == "$want" ]]; then
      prepare "$name" "$suite" "$package" "$prefix" "$program"
      found=true
    fi
  done
  $found || fail "unknown server $want; known: valkey-8.0 valkey-9.1 redis-8.6"
done
