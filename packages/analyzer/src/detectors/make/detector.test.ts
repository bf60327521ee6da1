import { describe, expect, it } from "vitest";
import type { Parameter } from "../../model.ts";
import { detectMake } from "./detector.ts";
import { memoryContext } from "../../testing/memory-context.ts";

// In-memory repository: path → text (null = unreadable, like a binary file).
const context = (files: Record<string, string | null>, outOfTime = () => false) => memoryContext(files, { outOfTime });

const param = (name: string, value: Parameter["value"], category: Parameter["category"] = "string", description: string | null = null): Parameter => ({
  name,
  value,
  category,
  cli_option: `${name}=`,
  choices: null,
  description,
  required: false,
});

const summary = (files: Record<string, string | null>) =>
  detectMake(context(files)).experiments.map((e) => ({
    id: e.id,
    command: e.command,
    description: e.description,
    parameters: e.parameters.map((p) => p.name),
  }));

describe("detectMake", () => {
  it("reads a self-documenting Makefile", () => {
    const makefile = [
      "# Settings",
      "PYTHON ?= python3",
      "EPOCHS ?= 10  # how many passes over the data",
      "LR := 0.001",
      "DATA_DIR = data/raw",
      "ARGS = --epochs $(EPOCHS) --lr $(LR)",
      "",
      ".PHONY: help train eval clean",
      "",
      "help: ## Show this help",
      "\t@grep -E '^[a-zA-Z_-]+:.*?## .*$$' $(MAKEFILE_LIST) | awk 'BEGIN {FS = \":.*?## \"}; {printf \"%s\\n\", $$1}'",
      "",
      "train: ## Train the model",
      "\t$(PYTHON) train.py $(ARGS) \\",
      "\t  --data ${DATA_DIR}",
      "",
      "# Evaluate the latest checkpoint",
      "# on the test split.",
      "eval:",
      "\t$(PYTHON) eval.py",
      "",
      "clean:",
      "\trm -rf out/",
    ].join("\n");
    const [help, train, evaluate, clean] = detectMake(context({ Makefile: makefile })).experiments;
    expect(help).toMatchObject({
      id: "make:help",
      title: "help",
      description: "Show this help",
      command: ["make", "help"],
      entry_point: "make help",
      parameters: [],
    });
    expect(train).toEqual({
      id: "make:train",
      title: "train",
      description: "Train the model",
      entry_point: "make train",
      command: ["make", "train"],
      language: "make",
      kind: "make-target",
      path: "Makefile",
      inputs: [],
      outputs: [],
      parameters: [
        param("PYTHON", "python3"),
        param("EPOCHS", 10, "integer", "how many passes over the data"),
        param("LR", 0.001, "number"),
        param("DATA_DIR", "data/raw"),
        param("ARGS", null),
      ],
    });
    expect(evaluate).toMatchObject({
      id: "make:eval",
      description: "Evaluate the latest checkpoint on the test split.",
      parameters: [param("PYTHON", "python3")],
    });
    expect(clean).toMatchObject({ id: "make:clean", description: null, parameters: [] });
  });

  it.each([
    [
      "special, pattern and file targets are not experiments",
      ".SUFFIXES:\n%.o: %.c\n\tcc -c $<\nfoo.o: foo.c\n\tcc foo.c\nout/model.bin:\n\tpython train.py\n$(BIN): main.go\n\tgo build\nrun:\n\t./app\n",
      ["make:run"],
    ],
    ["a phony target without a recipe still runs its prerequisites", ".PHONY: all\nall: build test\nbuild:\n\tgo build\n", ["make:all", "make:build"]],
    ["a non-phony target without a recipe is not listed", "all: build\nbuild:\n\tgo build\n", ["make:build"]],
    ["a file-looking phony target is listed", ".PHONY: docs.html\ndocs.html:\n\tpandoc\n", ["make:docs.html"]],
    ["inline recipes count", "lint: ; ruff check .\n", ["make:lint"]],
    ["several targets on one rule", "train eval:\n\tpython $@.py\n", ["make:train", "make:eval"]],
    ["define blocks are skipped", "define HELP\nfake: target\n\techo\nendef\nreal:\n\techo\n", ["make:real"]],
    ["a `#` inside a recipe is the shell's", "run:\n\techo '# not a comment'\n", ["make:run"]],
    ["double-colon rules", "check::\n\tpytest\ncheck::\n\truff .\n", ["make:check"]],
    ["static pattern rules name real files", "OBJS = a.o b.o\n$(OBJS): %.o: %.c\n\tcc -c $<\n", []],
    ["garbage does not throw", "\t\tstray recipe: line\n:::\n=\nifeq (\nendif endif\n\\\n", []],
  ])("%s", (_, makefile, ids) => {
    expect(detectMake(context({ Makefile: makefile })).experiments.map((e) => e.id)).toEqual(ids);
  });

  it("takes `##` on the rule line over comments above it, and keeps a comment across a .PHONY line", () => {
    expect(
      summary({
        Makefile: "# Build it\n.PHONY: build\nbuild:\n\tgo build\n# Ignored\n\ntest: ## Run the tests\n\tgo test\n##@ Section\nlint:\n\tgolangci-lint run\n",
      }),
    ).toEqual([
      { id: "make:build", command: ["make", "build"], description: "Build it", parameters: [] },
      { id: "make:test", command: ["make", "test"], description: "Run the tests", parameters: [] },
      { id: "make:lint", command: ["make", "lint"], description: null, parameters: [] },
    ]);
  });

  it("finds parameters through prerequisites' recipes and variable values, not through $$, functions or prerequisite names", () => {
    const makefile = [
      "DATA_URL = https://example.com/data.csv",
      "OUT = out",
      "HOME_DIR = /home",
      "SRC := $(wildcard src/*.py)",
      "FLAGS = --out $(OUT)",
      "STAMP := .installed",
      "train: data $(STAMP)",
      "\tpython train.py $(FLAGS) $(shell echo $(SRC)) $${HOME_DIR}",
      "data:",
      "\tcurl -o data.csv $(DATA_URL)",
    ].join("\n");
    const train = detectMake(context({ Makefile: makefile })).experiments[0]!;
    expect(train.parameters.map((p) => [p.name, p.value])).toEqual([
      ["DATA_URL", "https://example.com/data.csv"],
      ["OUT", "out"],
      // SRC and FLAGS are the build's own (a file list, flags): not knobs a user turns.
    ]);
  });

  it("leaves out the toolchain's variables and adds the documented ?= knobs, with the values conditionals test as choices", () => {
    const makefile = [
      "CC ?= gcc",
      "CFLAGS = -O3 -Wall",
      "LDFLAGS = -lm",
      "USE_CUDA ?= 0   # build the CUDA kernels",
      "PRECISION ?= fp32",
      "NTHREADS ?= 4",
      "ifeq ($(USE_CUDA),1)",
      "  CFLAGS += -DUSE_CUDA",
      "endif",
      "ifeq ($(PRECISION), bf16)",
      "  CFLAGS += -DBF16",
      "else ifeq ($(PRECISION),fp16)",
      "  CFLAGS += -DFP16",
      "endif",
      ".PHONY: all train clean",
      "all: train",
      "train: train.c",
      "	$(CC) $(CFLAGS) -o train train.c $(LDFLAGS)",
      "run: train",
      "	./train",
      "clean:",
      "	rm -f train",
    ].join("\n");
    const readme = "Build with `make train USE_CUDA=1`; `OMP=1` is not ours.";
    const out = detectMake(context({ Makefile: makefile, "README.md": readme })).experiments;
    const byTarget = Object.fromEntries(out.map((e) => [e.title, e.parameters.map((p) => [p.name, p.value, p.category, p.choices])]));
    const knobs = [
      ["USE_CUDA", 0, "integer", [0, 1]],
      ["PRECISION", "fp32", "string", ["fp32", "bf16", "fp16"]],
    ];
    expect(byTarget).toEqual({ all: knobs, train: knobs, run: knobs, clean: [] });
  });

  it.each([
    ["NVCC_FLAGS", false],
    ["NVCC_LDFLAGS", false],
    ["CUDA_HOME", false],
    ["ROCM_PATH", false],
    ["MPICC", false],
    ["BLAS_LIBS", false],
    ["DATA_DIR", true],
    ["EPOCHS", true],
    ["GPU_ARCH", true],
  ])("%s is a parameter: %s", (name, kept) => {
    const out = detectMake(context({ Makefile: `${name} = x\nrun:\n\t./go $(${name})\n` })).experiments;
    expect(out[0]!.parameters.map((p) => p.name)).toEqual(kept ? [name] : []);
  });

  it("evaluates assignments the way make does, and refuses to guess through conditionals", () => {
    const makefile = [
      "A = 1",
      "A = 2",
      "B ?= x",
      "B ?= y",
      "C = --fast",
      "C += --quiet",
      "ifeq ($(OS),Windows_NT)",
      "D = python",
      "else",
      "D = python3",
      "endif",
      "ifndef E",
      "E = 5",
      "endif",
      "F != git rev-parse HEAD",
      "export G = 1e-3",
      "override H := 007",
      "SHELL := /bin/bash",
      "run: I = 3",
      "run:",
      "\t$(SHELL) run.sh $(A) $(B) $(C) $(D) $(E) $(F) $(G) $(H) $(I) $(UNSET) $(CURDIR)",
    ].join("\n");
    const run = detectMake(context({ Makefile: makefile })).experiments[0]!;
    expect(run.parameters.map((p) => [p.name, p.value, p.category])).toEqual([
      ["A", 2, "integer"],
      ["B", "x", "string"],
      ["C", "--fast --quiet", "string"],
      ["D", null, "string"],
      ["E", 5, "integer"],
      ["F", null, "string"],
      ["G", 0.001, "number"],
      ["H", "007", "string"],
      ["I", 3, "integer"],
    ]);
  });

  it("runs nested Makefiles with -C, prefers GNUmakefile, follows includes", () => {
    const out = summary({
      Makefile: "include common.mk\nall:\n\t$(MAKE) -C services/api\n.PHONY: all\n",
      "common.mk": "PORT ?= 8080\nserve: ## Serve it\n\tpython -m http.server $(PORT)\n",
      "services/api/Makefile": "ignored:\n\techo\n",
      "services/api/GNUmakefile": "run:\n\tgo run .\n",
      "my dir/Makefile": "x:\n\techo\n",
    });
    expect(out).toEqual([
      { id: "make:serve", command: ["make", "serve"], description: "Serve it", parameters: ["PORT"] },
      { id: "make:all", command: ["make", "all"], description: null, parameters: [] },
      { id: "make:services/api:run", command: ["make", "-C", "services/api", "run"], description: null, parameters: [] },
    ]);
    expect(detectMake(context({ Makefile: "include common.mk\n", "common.mk": "t:\n\techo\n" })).experiments[0]!.path).toBe("common.mk");
  });

  it("skips unreadable Makefiles and stops when out of time", () => {
    expect(detectMake(context({ Makefile: null })).experiments).toEqual([]);
    expect(detectMake(context({ Makefile: "a:\n\techo\n" }, () => true)).experiments).toEqual([]);
  });

  it("stays fast on hostile input and caps a generated Makefile's targets", () => {
    const started = Date.now();
    const huge = {
      Makefile: `${"a = \\\n".repeat(100_000)}\n${"$(".repeat(100_000)}\n${" ".repeat(200_000)}x\n`,
      "gen/Makefile": Array.from({ length: 5000 }, (_, i) => `.PHONY: t${i}\nt${i}: t${i + 1}\n\techo $(V)`).join("\n"),
    };
    const out = detectMake(context(huge)).experiments;
    expect(out.length).toBe(500);
    expect(out[0]!.id).toBe("make:gen:t0");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("handles CRLF line endings and continued prerequisite lists", () => {
    expect(summary({ Makefile: "N = 4\r\n.PHONY: a \\\r\n  b\r\na: ## first\r\n\techo $(N)\r\nb:\r\n" })).toEqual([
      { id: "make:a", command: ["make", "a"], description: "first", parameters: ["N"] },
      { id: "make:b", command: ["make", "b"], description: null, parameters: [] },
    ]);
  });
});
