import { beforeAll, describe, expect, it } from "vitest";
import type { Parameter } from "../../model.ts";
import { Syntax } from "../../syntax.ts";
import { detectShell, shebangInterpreter } from "./detector.ts";
import { memoryContext, type MemoryFile } from "../../testing/memory-context.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

const context = (files: Record<string, string | MemoryFile>, outOfTime = () => false) => memoryContext(files, { syntax, outOfTime });

const positional = (n: number, value: Parameter["value"], required: boolean, category: Parameter["category"] = "string"): Parameter => ({
  name: `arg${n}`,
  value,
  category,
  cli_option: null,
  choices: null,
  description: null,
  required,
});

describe("shebangInterpreter", () => {
  it.each([
    ["#!/bin/sh\n", "sh"],
    ["#!/usr/bin/env bash\n", "bash"],
    ["#!/usr/bin/env -S bash -e\n", "bash"],
    ["#!/bin/bash -eu\necho", "bash"],
    ["#! /usr/local/bin/zsh", "zsh"],
    ["#!/usr/bin/env python3\n", "python3"],
    ["echo hi\n", null],
  ])("%j → %s", (text, expected) => expect(shebangInterpreter(text)).toBe(expected));
});

describe("detectShell", () => {
  it("reads a training script", () => {
    const script = [
      "#!/usr/bin/env bash",
      "# Train the model on one dataset.",
      "#",
      "# Usage: scripts/train.sh <data> [epochs] [lr]",
      "set -euo pipefail",
      "",
      'DATA="$1"',
      "EPOCHS=${2:-10}",
      'LR="${3:-0.001}"',
      ': "${WANDB_API_KEY:?set WANDB_API_KEY first}"',
      'OUT_DIR="${OUT_DIR:-./out}"',
      "CACHE=${XDG_CACHE_HOME-$HOME/.cache}",
      'python train.py --data "$DATA" --epochs "$EPOCHS" --lr "$LR" --out "$OUT_DIR" --home "$HOME"',
      'name="run"; echo "${name:-x}" "${lower:-y}"',
    ].join("\n");
    const { experiments, envVars } = detectShell(context({ "scripts/train.sh": script }));
    expect(experiments).toEqual([
      {
        id: "shell:scripts/train.sh",
        title: "train.sh",
        description: "Train the model on one dataset. Usage: scripts/train.sh <data> [epochs] [lr]",
        entry_point: "bash scripts/train.sh",
        command: ["bash", "scripts/train.sh"],
        language: "shell",
        kind: "shell-script",
        path: "scripts/train.sh",
        inputs: [],
        outputs: [],
        parameters: [positional(1, null, true), positional(2, 10, false, "integer"), positional(3, 0.001, false, "number")],
      },
    ]);
    expect(envVars).toEqual([
      { name: "WANDB_API_KEY", path: "scripts/train.sh", line: 10, required: true },
      { name: "OUT_DIR", path: "scripts/train.sh", line: 11, required: false },
      { name: "XDG_CACHE_HOME", path: "scripts/train.sh", line: 12, required: false },
    ]);
  });

  it.each<[string, Record<string, string | MemoryFile>, string[][]]>([
    ["sh by default", { "run.sh": "echo hi\n" }, [["sh", "run.sh"]]],
    ["bash by extension", { "run.bash": "echo hi\n" }, [["bash", "run.bash"]]],
    ["bash when the script uses [[", { "run.sh": "#!/bin/sh\nif [[ -n $x ]]; then :; fi\n" }, [["bash", "run.sh"]]],
    ["bash when the script uses arrays", { "run.sh": "a=(1 2)\n" }, [["bash", "run.sh"]]],
    ["zsh scripts run with zsh", { "tool.sh": "#!/bin/zsh\necho\n" }, [["zsh", "tool.sh"]]],
    ["an executable file with a shell shebang", { "bin/deploy": { text: "#!/bin/sh\necho\n", executable: true } }, [["sh", "bin/deploy"]]],
    ["not an executable file without one", { "bin/tool": { text: "echo\n", executable: true } }, []],
    ["not a non-executable file without extension", { "bin/deploy": { text: "#!/bin/sh\necho\n" } }, []],
    ["not a .sh file run by python", { "odd.sh": "#!/usr/bin/env python3\nprint()\n" }, []],
    ["not tests or workflows", { "tests/run.sh": "echo\n", "a/test/x.sh": "echo\n", ".github/ci.sh": "echo\n" }, []],
    ["not paths with spaces", { "my script.sh": "echo\n" }, []],
    ["not unreadable files", { "blob.sh": { text: null } }, []],
  ])("%s", (_, files, commands) => {
    expect(detectShell(context(files)).experiments.map((e) => e.command)).toEqual(commands);
  });

  it.each<[string, string, Parameter[]]>([
    [
      "getopts options come before the positional arguments",
      'while getopts ":vo:n" opt; do case $opt in v) V=1;; o) OUT=$OPTARG;; esac; done\nshift $((OPTIND-1))\necho "${1:-input.txt}"\n',
      [
        { name: "v", value: false, category: "flag", cli_option: "-v", choices: null, description: null, required: false },
        { name: "o", value: null, category: "string", cli_option: "-o", choices: null, description: null, required: false },
        { name: "n", value: false, category: "flag", cli_option: "-n", choices: null, description: null, required: false },
        positional(1, "input.txt", false),
      ],
    ],
    [
      "a getopts option defaults to the variable its branch sets",
      'MODEL=base\nEPOCHS=5\nwhile getopts "m:e:o:" opt; do\n  case $opt in\n    m) MODEL=$OPTARG ;;\n    e|E) EPOCHS="$OPTARG" ;;\n    o) OUT=$OPTARG ;;\n  esac\ndone\n',
      [
        { name: "m", value: "base", category: "string", cli_option: "-m", choices: null, description: null, required: false },
        { name: "e", value: 5, category: "integer", cli_option: "-e", choices: null, description: null, required: false },
        { name: "o", value: null, category: "string", cli_option: "-o", choices: null, description: null, required: false },
      ],
    ],
    ["a gap in the positions is still a required argument", 'echo "$2"\n', [positional(1, null, true), positional(2, null, true)]],
    [
      "a computed default is unknown, not guessed",
      'D=${1:-$(pwd)}\nE="${2:-$HOME/x}"\nF=${3:-}\n',
      [positional(1, null, false), positional(2, null, false), positional(3, "", false)],
    ],
    ["quoted defaults", "A=${1:-'two words'}\nB=${2:-\"x y\"}\n", [positional(1, "two words", false), positional(2, "x y", false)]],
    ["a default anywhere makes the argument optional", 'if [ -z "$1" ]; then echo; fi\nX=${1:-7}\n', [positional(1, 7, false, "integer")]],
    ["$0, $@ and $# are not parameters", 'echo "$0" "$@" "$#" "${#1}"\n', []],
    ["a function's $1 is its own argument", 'f() { echo "$1"; }\nf hello\n', []],
    ["unless the script passes its arguments on", 'main() { echo "${1:-a}"; }\nmain "$@"\n', [positional(1, "a", false)]],
    ["syntax errors leave what could be parsed", 'echo "${1:-x}"\nif then fi ((\n', [positional(1, "x", false)]],
  ])("%s", (_, script, parameters) => {
    expect(detectShell(context({ "s.sh": script })).experiments[0]!.parameters).toEqual(parameters);
  });

  it("reads environment variables only from defaults and :? checks of names the script does not set", () => {
    const script = [
      'echo "$PLAIN" "${BRACED}"',
      'LOCAL=1; echo "${LOCAL:-2}"',
      'for ITEM in a; do echo "${ITEM:-x}"; done',
      'read -r ANSWER; echo "${ANSWER:-no}"',
      'echo "${lower:-x}" "${MIXED_case:-x}"',
      ': "${TOKEN:?}" "${TOKEN:-fallback}"',
      'export REGION="${REGION:-eu}"',
      ': "${CACHE:=/tmp}"',
    ].join("\n");
    expect(detectShell(context({ "e.sh": script })).envVars).toEqual([
      { name: "TOKEN", path: "e.sh", line: 6, required: true },
      { name: "REGION", path: "e.sh", line: 7, required: false },
      { name: "CACHE", path: "e.sh", line: 8, required: false },
    ]);
  });

  it("takes the first comment block after the shebang, skipping licence headers and directives", () => {
    const describe = (text: string) => detectShell(context({ "x.sh": text })).experiments[0]!.description;
    expect(
      describe(
        "#!/bin/sh\n# Copyright 2024 Someone\n# Licensed under the MIT License\n\n# shellcheck disable=SC2086\n# Deploy the app.\n#####\necho\n# not this\n",
      ),
    ).toBe("Deploy the app.");
    expect(describe("#!/bin/sh\necho\n# too late\n")).toBeNull();
    expect(describe("# No shebang here\necho\n")).toBe("No shebang here");
    expect(describe("#!/bin/sh\n# This program is free software; you can redistribute it\n\n# Uncompress files.  Quickly.\n")).toBe(
      "Uncompress files. Quickly.",
    );
    expect(describe("#!/bin/sh\n### BEGIN INIT INFO\n# Provides: x\n### END INIT INFO\n")).toBeNull();
  });

  it("stops when out of time", () => {
    expect(detectShell(context({ "a.sh": "echo\n" }, () => true)).experiments).toEqual([]);
  });
});

describe("shell: files meant to be sourced", () => {
  const ids = (files: Record<string, string>) => detectShell(context(files)).experiments.map((e) => e.id);
  it.each<[string, Record<string, string>, string[]]>([
    ["functions only, sourced or not", { "lib.sh": '#!/bin/bash\nlog() { echo "$@"; }\nX=1\n' }, []],
    ["exports only, sourced by a script", { "env.sh": "export A=1\nexport B=2\n", "run.sh": "#!/bin/sh\nsource ./env.sh\necho run\n" }, ["shell:run.sh"]],
    ["exports only, sourced by the README", { "env.sh": "export A=1\n", "README.md": "First `source scripts/env.sh`, then run.\n" }, []],
    ["exports only, sourced by nobody: kept", { "env.sh": "export A=1\n" }, ["shell:env.sh"]],
    ["sourced through a computed folder", { "common.sh": "set -e\nX=1\n", "run.sh": '#!/bin/bash\n. "${BASH_SOURCE%/*}/common.sh"\nmake\n' }, ["shell:run.sh"]],
    ['functions run by main "$@": a script', { "deploy.sh": '#!/bin/bash\nmain() { echo "$1"; }\nmain "$@"\n' }, ["shell:deploy.sh"]],
    [
      "a sourced file that also does work: a script",
      { "setup.sh": "export A=1\npip install -r requirements.txt\n", "run.sh": "#!/bin/sh\n. ./setup.sh\n" },
      ["shell:run.sh", "shell:setup.sh"],
    ],
    [
      "a guard with only setup in it is no action",
      { "env.sh": '[ -z "$A" ] && export A=1\nif [ -d .venv ]; then export PATH=".venv/bin:$PATH"; fi\n', "run.sh": "#!/bin/sh\n. ./env.sh\nls\n" },
      ["shell:run.sh"],
    ],
    [
      "a guard that runs something is an action",
      { "env.sh": "if [ -d .venv ]; then echo found; fi\n", "run.sh": "#!/bin/sh\n. ./env.sh\nls\n" },
      ["shell:env.sh", "shell:run.sh"],
    ],
  ])("%s", (_, files, want) => expect(ids(files).sort()).toEqual(want));
});
