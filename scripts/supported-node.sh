#!/usr/bin/env bash
# A Node this project supports (package.json `engines`): the `node` on PATH when it is one, else the
# official build of Node $DOSSIER_NODE_VERSION as published on the npm registry (package
# node-linux-<arch>; no install script runs), fetched once into ${XDG_CACHE_HOME:-~/.cache}/dossier/.
#
#   source scripts/supported-node.sh        puts that Node first on PATH (.ci/run)
#   bash scripts/supported-node.sh FILE …   runs `node FILE …` on it (npm start, npm run cli)
#
# It says what it does on stderr, and fails naming the fix when no supported Node can be had.

DOSSIER_NODE_VERSION=22.23.3 # the node:22-bookworm-slim line the Dockerfile builds on
DOSSIER_NODE_ENGINES='^22.22.3 || ^24.15.0 || >=26.0.0'

dossier_node_supported() {
  command -v node >/dev/null 2>&1 && node -e '
    const [a, b, c] = process.versions.node.split(".").map(Number);
    process.exit(a >= 26 || (a === 24 && b >= 15) || (a === 22 && (b > 22 || (b === 22 && c >= 3))) ? 0 : 1);
  '
}

dossier_use_supported_node() {
  dossier_node_supported && return 0
  local have arch dir tmp
  have=$(node --version 2>/dev/null || echo 'no node')
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *)
      echo "dossier: Node $have is older than this project needs ($DOSSIER_NODE_ENGINES) and there is no" \
        "official build for $(uname -m) to fetch: install Node 22.22.3 or later (e.g. nvm install 22)" >&2
      return 1
      ;;
  esac
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/dossier/node-$DOSSIER_NODE_VERSION-$arch"
  echo "dossier: Node $have is older than this project needs ($DOSSIER_NODE_ENGINES);" \
    "using Node $DOSSIER_NODE_VERSION from $dir" >&2
  if [ ! -x "$dir/bin/node" ]; then
    echo "dossier: fetching node-linux-$arch@$DOSSIER_NODE_VERSION from the npm registry (once, about 30 MB)" >&2
    tmp=$(mktemp -d)
    if ! (cd "$tmp" && npm pack --silent "node-linux-$arch@$DOSSIER_NODE_VERSION" >/dev/null) ||
      ! mkdir -p "$dir.partial" ||
      ! tar xzf "$tmp/node-linux-$arch-$DOSSIER_NODE_VERSION.tgz" -C "$dir.partial" --strip-components=1; then
      rm -rf "$tmp" "$dir.partial"
      echo "dossier: could not fetch Node $DOSSIER_NODE_VERSION (npm pack node-linux-$arch@$DOSSIER_NODE_VERSION" \
        "failed): install Node 22.22.3 or later (e.g. nvm install 22) and run the command again" >&2
      return 1
    fi
    rm -rf "$tmp" "$dir" && mv "$dir.partial" "$dir"
  fi
  export PATH="$dir/bin:$PATH"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  dossier_use_supported_node || exit 1
  exec node "$@"
fi
