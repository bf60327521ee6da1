#!/usr/bin/env bash
# Publish a git repository (or a plain directory, committed as-is) to the local
# cluster's git daemon, so pods can clone git://$POD_GATEWAY/NAME.
# usage: git-publish.sh <source dir or repo URL/path> <name>
source "$(dirname "$0")/lib.sh"
[ $# -eq 2 ] || die "usage: git-publish.sh <source dir or repository> <name>"
src="$1" name="$2"
[[ "$name" =~ ^[A-Za-z0-9._/-]+$ && "$name" != *..* ]] || die "bad repository name: $name"
dest="$CLUSTER_DIR/git/$name"
mkdir -p "$(dirname "$dest")"
if [ -d "$src" ] && ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  # a plain directory: make a one-commit repository of it
  tmp="$(mktemp -d)"; cp -a "$src/." "$tmp/"
  git -C "$tmp" init -q -b main
  git -C "$tmp" add -A
  git -C "$tmp" -c user.name=codeplane -c user.email=codeplane@localhost commit -q -m "fixture $name"
  src="$tmp"
fi
rm -rf "$dest.tmp"
git clone -q --mirror "$src" "$dest.tmp"
rm -rf "$dest"; mv "$dest.tmp" "$dest"
[ -n "${tmp:-}" ] && rm -rf "$tmp"
echo "git://$POD_GATEWAY/$name"
