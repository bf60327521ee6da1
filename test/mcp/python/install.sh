#!/usr/bin/env bash
# Installs the official Python MCP SDK (`mcp` on PyPI, pinned) into a
# virtualenv outside the clone, cached by version under
# ~/.cache/codeplane/venv, and prints the path of its python. The second MCP
# client implementation test/mcp/python-sdk.test.ts drives the server with.
# A venv is used only once its install finished (the .complete marker), so an
# interrupted install is redone rather than trusted.
set -euo pipefail

VERSION="${1:-${MCP_PYTHON_SDK_VERSION:-2.3.0}}"
CACHE="${CODEPLANE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codeplane}"
VENV="$CACHE/venv/mcp-python-$VERSION"

if [ -f "$VENV/.complete" ] && [ -x "$VENV/bin/python" ]; then
  echo "$VENV/bin/python"
  exit 0
fi

command -v python3 >/dev/null || { echo "python3 is needed for the Python MCP SDK test (apt-get install python3 python3-venv)" >&2; exit 1; }
if ! python3 -c 'import ensurepip' 2>/dev/null; then
  echo "installing python3-venv" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq python3-venv >&2
fi

echo "installing the Python MCP SDK (mcp==$VERSION) into $VENV" >&2
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "mcp==$VERSION" >&2
"$VENV/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))' >&2
touch "$VENV/.complete"
echo "$VENV/bin/python"
