# Sourced: puts Node >= 22.18 first on PATH, installing Node 24 locally when needed.
NODE_PIN="24.21.0"
node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=18)?0:1)'
}
if ! node_ok; then
  tools="$PWD/.tools/node"
  if [ ! -x "$tools/node_modules/node/bin/node" ]; then
    echo "installing node@$NODE_PIN into .tools/node (system node is $(node --version 2>/dev/null || echo absent))"
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-save --no-audit --no-fund --no-package-lock "node@$NODE_PIN" >/dev/null
  fi
  export PATH="$tools/node_modules/node/bin:$PATH"
  node_ok || { echo "could not provide Node >= 22.18" >&2; exit 1; }
fi
