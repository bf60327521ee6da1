#!/usr/bin/env bash
# Installs schemathesis (pinned) into a virtualenv outside the clone, cached by
# version under ~/.cache/codeplane/venv, and prints the path of its `st`.
# A venv is used only once its install finished (the .complete marker), so an
# interrupted install is redone rather than trusted.
set -euo pipefail

VERSION="${SCHEMATHESIS_VERSION:-4.32.5}"
CACHE="${CODEPLANE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/codeplane}"
VENV="$CACHE/venv/schemathesis-$VERSION"

if [ -f "$VENV/.complete" ] && [ -x "$VENV/bin/st" ]; then
  echo "$VENV/bin/st"
  exit 0
fi

command -v python3 >/dev/null || { echo "python3 is needed for the fuzzer (apt-get install python3 python3-venv)" >&2; exit 1; }
if ! python3 -c 'import ensurepip' 2>/dev/null; then
  echo "installing python3-venv" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq python3-venv >&2
fi

echo "installing schemathesis $VERSION into $VENV" >&2
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION" >&2
"$VENV/bin/st" --version >&2
touch "$VENV/.complete"
echo "$VENV/bin/st"
