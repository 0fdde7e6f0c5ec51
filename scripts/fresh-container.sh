#!/usr/bin/env bash
# Checks the README's promise on a machine that has never seen this project: a
# container-like run (its own mount and PID namespaces, pivot_root into a plain
# Debian root, an empty HOME, no bubblewrap, no PostgreSQL) of exactly the
# README's two commands, `npm ci && npm run demo` then `npm run test:all`.
# A chroot would not do: the kernel refuses user and mount namespaces to a
# chrooted process, so the sandbox tests could not run; pivot_root is what
# container runtimes use. The network is the host's (npm registry, Debian mirror).
#
#   sudo scripts/fresh-container.sh [--base DIR] [--keep] [REPO]
#
# REPO (default: this checkout) is cloned, so only committed work is tested.
# --base is a Debian root filesystem with node and npm; when DIR does not exist
# it is made with debootstrap and this host's node and npm are copied in. The
# base is never written: the run happens on an overlay over it, removed at the
# end unless --keep. Needs root, util-linux (unshare, mount, pivot_root) and,
# to make a base, debootstrap. Prints the two commands' output and their times.
set -euo pipefail

say() { echo "fresh-container: $*" >&2; }

base=/var/tmp/agent-fresh-base
keep=0
repo=
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) say "unknown option $1 (use --base DIR, --keep, REPO)"; exit 2 ;;
    *) repo=$1; shift ;;
  esac
done
repo=${repo:-$(cd "$(dirname "$0")/.." && pwd)}

if [ "$(id -u)" != 0 ]; then say "needs root (namespaces, mounts): run it with sudo"; exit 2; fi
for tool in unshare mount pivot_root git; do
  command -v "$tool" >/dev/null 2>&1 || { say "$tool is missing: apt-get install -y util-linux mount git"; exit 2; }
done

# A minimal bookworm with what a container image of node would have: node, npm,
# git and CA certificates, and nothing the tests need.
make_base() {
  command -v debootstrap >/dev/null 2>&1 || { say "no base at $base and no debootstrap: apt-get install -y debootstrap"; exit 2; }
  local node npm_dir
  node=$(command -v node) || { say "node is missing on this host (copied into the base)"; exit 2; }
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  say "making $base with debootstrap (a few minutes)"
  debootstrap --variant=minbase --include=ca-certificates,git,libstdc++6 bookworm "$base" http://deb.debian.org/debian >&2
  install -m 0755 "$node" "$base/usr/bin/node"
  mkdir -p "$base/usr/lib/node_modules"
  cp -a "$npm_dir" "$base/usr/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$base/usr/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$base/usr/bin/npx"
}
[ -x "$base/usr/bin/node" ] || make_base

run=$(mktemp -d -p /var/tmp agent-fresh.XXXXXX)
cleanup() { if [ "$keep" = 1 ]; then say "kept $run"; else rm -rf "$run"; fi; }
trap cleanup EXIT
mkdir -p "$run/upper" "$run/work" "$run/root"

# What runs as PID 1 of the new namespaces: mount the overlay and the kernel
# file systems, clone the repository, pivot_root, then the README's commands
# with an empty HOME and a clean environment.
inside() {
  set -euo pipefail
  mount --make-rprivate /
  mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$run/root"
  local r=$run/root
  # A fresh HOME: whatever an earlier run or the base's maker left in /root goes.
  rm -rf "$r/root" && mkdir -m 0700 "$r/root"
  mount -t proc proc "$r/proc"
  mount -t sysfs sysfs "$r/sys"
  mount --rbind /dev "$r/dev"
  mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm"
  # The host's network, as a container runtime passes it on: its DNS and, where
  # an intercepting proxy needs them, its own CA certificates.
  cp /etc/resolv.conf "$r/etc/resolv.conf"
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    mkdir -p "$r/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$r/usr/local/share/ca-certificates/"
    cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/ca-certificates.crt"
  fi
  local extra_ca=
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
    cp "$NODE_EXTRA_CA_CERTS" "$r/etc/ssl/host-extra-ca.pem"
    extra_ca=NODE_EXTRA_CA_CERTS=/etc/ssl/host-extra-ca.pem
  fi
  git clone --quiet "$repo" "$r/root/agent"
  cd "$r"
  mkdir -p .old-root
  pivot_root . .old-root
  cd /
  umount -l /.old-root
  rmdir /.old-root
  exec env -i HOME=/root USER=root LANG=C.UTF-8 CI=true $extra_ca \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c '
      cd /root/agent
      say() { echo "fresh-container: $*" >&2; }
      for tool in bwrap initdb postgres; do
        command -v "$tool" >/dev/null 2>&1 && { say "$tool is already here: not a fresh machine"; exit 2; }
      done
      ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && { say "PostgreSQL is already here: not a fresh machine"; exit 2; }
      say "$(git log --oneline -1) in a fresh root, HOME=$HOME empty"
      start=$(date +%s)
      npm ci && npm run demo || { say "npm ci && npm run demo failed"; exit 1; }
      demo=$(( $(date +%s) - start ))
      say "npm ci && npm run demo passed in ${demo}s"
      start=$(date +%s)
      status=0
      npm run test:all || status=$?
      say "npm run test:all exited $status after $(( $(date +%s) - start ))s"
      exit "$status"'
}
export -f inside say
export base run repo
# No network namespace: the run needs the npm registry and the Debian mirror.
unshare --mount --pid --fork --uts --ipc bash -c inside
