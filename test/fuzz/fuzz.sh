#!/usr/bin/env bash
# `make fuzz`: installs schemathesis (cached outside the clone), then runs
# test/fuzz/run.ts in a network namespace whose only interface is loopback,
# so nothing the fuzzer makes up (clone URLs, hosts) can reach another machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
# The project's Node 24 (make install puts it in node_modules), whatever node the machine has.
export PATH="$PWD/node_modules/.bin:$PATH"

SCHEMATHESIS="$(test/fuzz/schemathesis.sh)"
export SCHEMATHESIS

if [ "${FUZZ_ISOLATE:-1}" = "0" ]; then
  echo "fuzz: FUZZ_ISOLATE=0: running without a network namespace" >&2
  exec node test/fuzz/run.ts
fi
if [ "$(id -u)" = "0" ]; then
  exec unshare --net -- sh -c 'ip link set lo up && exec node test/fuzz/run.ts'
fi
echo "fuzz: a network namespace needs root (sudo make fuzz);" >&2
echo "fuzz: FUZZ_ISOLATE=0 runs without one, letting the service resolve and fetch the clone URLs the fuzzer makes up." >&2
exit 1
