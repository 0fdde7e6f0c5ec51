#!/usr/bin/env bash
# `npm run test:all`: installs what the whole test suite needs and runs it — on a
# fresh machine as in CI (.ci/run runs exactly this). Besides `npm ci`, the tests
# need bubblewrap (the shell sandbox), strace (counting a run's fsyncs), jq (the compat and hook
# scripts), tmux (teammate panes) and PostgreSQL's server binaries (each
# test file of the PostgreSQL store starts its own throw-away cluster), run as
# the `postgres` user when the tests run as root. What cannot be installed here
# is said in one line with the command that would; the tests that need it then
# fail naming `npm run test:all`, never skip.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "test:all: $*" >&2; }

# As root, or through sudo (which may ask for a password); fails when neither.
as_root() {
  if [ "$(id -u)" = "0" ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else return 1
  fi
}

# The install command of this system's package manager for Debian-style names
# bubblewrap/postgresql, or nothing when there is none we know.
install_command() {
  if command -v apt-get >/dev/null 2>&1; then echo "apt-get install -y"
  elif command -v dnf >/dev/null 2>&1; then echo "dnf install -y"
  elif command -v apk >/dev/null 2>&1; then echo "apk add"
  fi
}

# Fedora names PostgreSQL's server package postgresql-server.
package_name() {
  if [ "$1" = postgresql ] && command -v dnf >/dev/null 2>&1; then echo postgresql-server; else echo "$1"; fi
}

have_postgres() {
  command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ls /usr/libexec/postgresql*/initdb >/dev/null 2>&1
}

missing=()
[ "$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null 2>&1 && missing+=("$(package_name bubblewrap)")
[ "$(uname -s)" = Linux ] && ! command -v strace >/dev/null 2>&1 && missing+=(strace)
have_postgres || missing+=("$(package_name postgresql)")
# The compat scripts and Claude Code-style hook scripts read JSON with jq, as their docs' examples do.
command -v jq >/dev/null 2>&1 || missing+=(jq)
# --teammate-panes is tested inside a private tmux server.
command -v tmux >/dev/null 2>&1 || missing+=(tmux)

if [ "${#missing[@]}" -gt 0 ]; then
  install=$(install_command)
  if [ -z "$install" ]; then
    say "cannot install ${missing[*]}: no apt-get, dnf or apk here; install them with your package manager (on macOS: brew install postgresql), then run npm run test:all again"
  else
    say "installing ${missing[*]}"
    # apt-get needs its package lists first on a fresh machine (a container's are empty).
    if [ "${install%% *}" = apt-get ]; then as_root apt-get update -qq || true; fi
    # shellcheck disable=SC2086 # the command is words on purpose
    if ! as_root $install "${missing[@]}"; then
      say "could not install ${missing[*]} (not root, no sudo, or the package manager failed); run as root: $install ${missing[*]}"
    fi
  fi
fi

# Debian's package makes the postgres user; a server installed otherwise may lack it.
if [ "$(id -u)" = "0" ] && have_postgres && ! id postgres >/dev/null 2>&1; then
  say "adding the postgres user (the test clusters run as it when the tests run as root)"
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres 2>/dev/null || adduser -S -H postgres \
    || say "could not add the postgres user; run as root: useradd --system postgres"
fi

npm ci
npm test
