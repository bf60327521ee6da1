#!/usr/bin/env bash
# Generates the Python SDK's typed layer (codeplane/_api) from an OpenAPI
# document with openapi-python-client, formatted by ruff.
# usage: generate.sh <openapi.json> [<output dir>]   (default: codeplane/_api beside this script)
# `npm run sdk` runs it; test/sdk/python.test.ts runs it into a temporary
# directory and fails when the checked-in code differs (run `npm run sdk`).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DOC="$1"
OUT="${2:-$HERE/../codeplane/_api}"
PY="$("$HERE/install.sh")"
BIN="$(dirname "$PY")"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
PATH="$BIN:$PATH" "$BIN/openapi-python-client" generate --path "$DOC" --config "$HERE/generator.yaml" \
  --output-path "$TMP/_api" --meta none >"$TMP/log" 2>&1 || { cat "$TMP/log" >&2; exit 1; }
# It warns, without failing, about what it could not generate: refuse that, so nothing is silently left out.
if grep -q "Warning(s) encountered" "$TMP/log"; then cat "$TMP/log" >&2; exit 1; fi
rm -rf "$TMP/_api/.ruff_cache"   # the formatter's cache, not code
rm -rf "$OUT"
mkdir -p "$(dirname "$OUT")"
mv "$TMP/_api" "$OUT"
