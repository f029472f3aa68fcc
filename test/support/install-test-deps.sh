#!/usr/bin/env bash
# Installs what the integration tests and benchmarks need and the machine lacks: etcd and
# etcdctl 3.4 (Debian packages etcd-server, etcd-client), haproxy, and ip and tc (iproute2, for the
# chaos suite's network namespaces). Idempotent: a tool already
# present is only reported. Prints one line per tool.
#
# Installs with apt-get (running `apt-get update` only if the first attempt fails), as root, or
# through `sudo -n` when not root. Packages are installed for their binaries only: their system
# services are neither started (a temporary policy-rc.d refuses it during the install) nor left
# enabled. Nothing that was on the machine before is stopped or changed.
set -euo pipefail

TOOLS=(etcd etcdctl haproxy ip tc prometheus promtool chromium)
declare -A PACKAGE_OF=([etcd]=etcd-server [etcdctl]=etcd-client [haproxy]=haproxy [ip]=iproute2 [tc]=iproute2 [prometheus]=prometheus [promtool]=prometheus [chromium]=chromium)
declare -A SERVICE_OF=([etcd-server]=etcd [haproxy]=haproxy [prometheus]=prometheus)

say() { printf 'install-test-deps: %s\n' "$*"; }
die() { printf 'install-test-deps: error: %s\n' "$*" >&2; exit 1; }

find_tool() {
  local path
  if path=$(command -v "$1" 2>/dev/null); then
    printf '%s\n' "$path"
    return 0
  fi
  for dir in /usr/bin /usr/sbin /usr/local/bin /usr/local/sbin; do
    if [ -x "$dir/$1" ]; then
      printf '%s\n' "$dir/$1"
      return 0
    fi
  done
  return 1
}

version_of() {
  case "$1" in
    etcd) "$2" --version 2>/dev/null | head -n 1 || true ;;
    etcdctl) "$2" version 2>/dev/null | head -n 1 || true ;;
    haproxy) "$2" -v 2>/dev/null | head -n 1 || true ;;
    ip|tc) "$2" -V 2>/dev/null | head -n 1 || true ;;
    prometheus|promtool) "$2" --version 2>&1 | head -n 1 || true ;;
    chromium) "$2" --version 2>/dev/null | head -n 1 || true ;;
  esac
}

missing_packages=()
for tool in "${TOOLS[@]}"; do
  if path=$(find_tool "$tool"); then
    say "found $tool: $path ($(version_of "$tool" "$path"))"
  else
    pkg=${PACKAGE_OF[$tool]}
    case " ${missing_packages[*]-} " in *" $pkg "*) ;; *) missing_packages+=("$pkg") ;; esac
  fi
done
[ "${#missing_packages[@]}" -eq 0 ] && exit 0

command -v apt-get >/dev/null 2>&1 ||
  die "missing ${missing_packages[*]} and apt-get is not available: install etcd 3.4 (etcd, etcdctl), haproxy, iproute2, prometheus and chromium by hand"

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  die "missing ${missing_packages[*]}: run this script as root, or as a user with password-less sudo (apt-get install ${missing_packages[*]})"
fi

run_root() { "${as_root[@]}" "$@"; }

log=$(mktemp "${TMPDIR:-/tmp}/install-test-deps.XXXXXX")
policy=/usr/sbin/policy-rc.d
created_policy=0
cleanup() {
  if [ "$created_policy" -eq 1 ]; then run_root rm -f "$policy" || true; fi
  rm -f "$log"
}
trap cleanup EXIT

# invoke-rc.d and deb-systemd-invoke ask policy-rc.d before starting a service; 101 means "no".
# An existing policy is the machine's own and is left alone.
if [ ! -e "$policy" ]; then
  run_root sh -c "printf '#!/bin/sh\nexit 101\n' > '$policy' && chmod 755 '$policy'"
  created_policy=1
fi

apt_install() {
  run_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >>"$log" 2>&1
}

if ! apt_install "${missing_packages[@]}"; then
  say "apt-get install failed; running apt-get update and trying again"
  run_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$log" 2>&1 || true
  if ! apt_install "${missing_packages[@]}"; then
    tail -n 30 "$log" >&2
    die "could not install ${missing_packages[*]} (apt-get output above)"
  fi
fi

# The packages just installed may have enabled their service for the next boot: disable it.
for pkg in "${missing_packages[@]}"; do
  service=${SERVICE_OF[$pkg]-}
  [ -n "$service" ] || continue
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    run_root systemctl disable --now "$service" >>"$log" 2>&1 || true
  elif command -v systemctl >/dev/null 2>&1; then
    run_root systemctl disable "$service" >>"$log" 2>&1 || true
  fi
  if command -v update-rc.d >/dev/null 2>&1 && [ -e "/etc/init.d/$service" ]; then
    run_root update-rc.d "$service" disable >>"$log" 2>&1 || true
  fi
done

status=0
for tool in "${TOOLS[@]}"; do
  pkg=${PACKAGE_OF[$tool]}
  case " ${missing_packages[*]} " in *" $pkg "*) ;; *) continue ;; esac
  if path=$(find_tool "$tool"); then
    say "installed $tool: $path ($(version_of "$tool" "$path")) from package $pkg"
  else
    printf 'install-test-deps: error: package %s installed but %s is still not found\n' "$pkg" "$tool" >&2
    status=1
  fi
done
exit "$status"
