#!/usr/bin/env bash
# Installs what the Python SDK is generated and tested with into a virtualenv
# outside the clone, cached by the pinned versions under
# ~/.cache/codeplane/venv, and prints the path of its python: the generator
# (openapi-python-client, which formats with ruff) and the SDK's runtime
# dependencies (httpx, attrs, python-dateutil). A venv is used only once its
# install finished (the .complete marker), so an interrupted one is redone.
set -euo pipefail

GENERATOR="openapi-python-client==0.29.1"
RUFF="ruff==0.17.6"
RUNTIME=("httpx==0.28.1" "attrs==26.1.0" "python-dateutil==2.9.0.post0")
CACHE="${CODEPLANE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codeplane}"
KEY="$(printf '%s\n' "$GENERATOR" "$RUFF" "${RUNTIME[@]}" | sha256sum | cut -c1-12)"
VENV="$CACHE/venv/sdk-python-$KEY"

if [ -f "$VENV/.complete" ] && [ -x "$VENV/bin/python" ]; then
  echo "$VENV/bin/python"
  exit 0
fi
command -v python3 >/dev/null || { echo "python3 is needed for the Python SDK (apt-get install python3 python3-venv)" >&2; exit 1; }
if ! python3 -c 'import ensurepip' 2>/dev/null; then
  echo "installing python3-venv" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq python3-venv >&2
fi
echo "installing the Python SDK's generator and dependencies into $VENV" >&2
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "$GENERATOR" "$RUFF" "${RUNTIME[@]}" >&2
touch "$VENV/.complete"
echo "$VENV/bin/python"
