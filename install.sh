#!/bin/sh
# Installs the `agent` executable for this machine from a release: picks the file
# for this OS and CPU from the release's SHA256SUMS, checks its checksum, and puts
# it in ~/.local/bin (created if missing) or $AGENT_INSTALL_DIR.
#
#   AGENT_RELEASE_DIR=path/to/release sh install.sh      # a directory of release files
#   AGENT_RELEASE_URL=https://host/releases/v0.1.0 sh install.sh
#
# AGENT_RELEASE_URL is the base URL the release files (and SHA256SUMS) are under;
# file:// URLs work too. Nothing is installed unless the checksum matches.
set -eu

say() { printf '%s\n' "install.sh: $*" >&2; }
die() { say "$*"; exit 1; }

detect_os() {
  case "$(uname -s)" in
    Linux) echo linux ;;
    Darwin) echo darwin ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT) echo windows ;;
    *) die "unsupported operating system $(uname -s): releases exist for Linux, macOS and Windows; build from source instead (see README.md)" ;;
  esac
}

detect_arch() {
  case "$(uname -m)" in
    x86_64 | amd64 | x64)
      # A shell under Rosetta 2 reports x86_64 on an Apple silicon Mac: the native build is better.
      if [ "$1" = darwin ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
        echo arm64
      else
        echo x64
      fi
      ;;
    aarch64 | arm64) echo arm64 ;;
    *) die "unsupported CPU $(uname -m): releases exist for x64 and arm64; build from source instead (see README.md)" ;;
  esac
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed, so the download cannot be verified; install one (coreutils) and run again"
  fi
}

# fetch NAME DEST: one release file, from the directory or the URL.
fetch() {
  if [ -n "${AGENT_RELEASE_DIR:-}" ]; then
    [ -f "$AGENT_RELEASE_DIR/$1" ] || die "$AGENT_RELEASE_DIR/$1 does not exist; check AGENT_RELEASE_DIR"
    cp "$AGENT_RELEASE_DIR/$1" "$2"
  elif command -v curl >/dev/null 2>&1; then
    curl -fsSL "$AGENT_RELEASE_URL/$1" -o "$2" || die "could not download $AGENT_RELEASE_URL/$1; check AGENT_RELEASE_URL and the network"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$AGENT_RELEASE_URL/$1" || die "could not download $AGENT_RELEASE_URL/$1; check AGENT_RELEASE_URL and the network"
  else
    die "neither curl nor wget is installed; install one, or download the release and set AGENT_RELEASE_DIR"
  fi
}

if [ -z "${AGENT_RELEASE_DIR:-}" ] && [ -z "${AGENT_RELEASE_URL:-}" ]; then
  die "no release to install from: set AGENT_RELEASE_URL to the release's base URL or AGENT_RELEASE_DIR to a directory holding its files"
fi
AGENT_RELEASE_URL="${AGENT_RELEASE_URL:-}"
AGENT_RELEASE_URL="${AGENT_RELEASE_URL%/}"

os="$(detect_os)"
arch="$(detect_arch "$os")"
suffix=""
[ "$os" = windows ] && suffix=".exe"

work="$(mktemp -d 2>/dev/null || mktemp -d -t agent-install)"
partial=""
cleanup() { rm -rf "$work"; [ -z "$partial" ] || rm -f "$partial"; }
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

fetch SHA256SUMS "$work/SHA256SUMS"
# A line is "<hash>  agent-<version>-<os>-<arch>[.exe]".
line="$(grep -E "^[0-9a-f]{64}  agent-[^ ]+-$os-$arch$suffix\$" "$work/SHA256SUMS" | head -n 1 || true)"
[ -n "$line" ] || die "the release has no executable for $os-$arch (SHA256SUMS lists: $(cut -d ' ' -f 3 "$work/SHA256SUMS" | tr '\n' ' '))"
expected="${line%%  *}"
file="${line#*  }"

fetch "$file" "$work/$file"
actual="$(sha256_of "$work/$file")"
[ "$actual" = "$expected" ] || die "checksum mismatch for $file: expected $expected, got $actual; nothing was installed (download it again)"

dir="${AGENT_INSTALL_DIR:-$HOME/.local/bin}"
mkdir -p "$dir" || die "cannot create $dir; set AGENT_INSTALL_DIR to a directory you can write"
target="$dir/agent$suffix"
# Copy beside the target, then rename over it: a running agent is never left half-written.
partial="$dir/.agent-install.$$"
cp "$work/$file" "$partial" || die "cannot write to $dir; set AGENT_INSTALL_DIR to a directory you can write"
chmod 0755 "$partial"
mv -f "$partial" "$target"
partial=""

version="$("$target" --version 2>/dev/null)" || die "installed $target, but it does not run; report this with the output of \`$target --version\`"
say "installed agent $version as $target"

case ":${PATH:-}:" in
  *":$dir:"*) ;;
  *)
    say "$dir is not on your PATH; add it, e.g. put this line in ~/.profile or your shell's rc file:"
    say "  export PATH=\"$dir:\$PATH\""
    ;;
esac
