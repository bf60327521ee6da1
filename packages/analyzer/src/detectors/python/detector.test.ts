import { beforeAll, describe, expect, it } from "vitest";
import type { EnvVarUse, Parameter } from "../../model.ts";
import { Syntax } from "../../syntax.ts";
import { literal } from "./literals.ts";
import { detectPython } from "./detector.ts";
import { memoryContext } from "../../testing/memory-context.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

const context = (files: Record<string, string | null>, outOfTime = () => false) => memoryContext(files, { syntax, outOfTime });

const param = (p: Partial<Parameter> & { name: string }): Parameter => ({
  value: null,
  category: "string",
  cli_option: `--${p.name}`,
  choices: null,
  description: null,
  required: false,
  ...p,
});

const MAIN = 'if __name__ == "__main__":\n    main()\n';

describe("python: which files are scripts", () => {
  it.each([
    ["double quotes", MAIN, true],
    ["single quotes, reversed", "if '__main__' == __name__:\n    pass\n", true],
    ["parenthesised", 'if (__name__ == "__main__"):\n    pass\n', true],
    ["inside a function", 'def f():\n    if __name__ == "__main__":\n        pass\n', false],
    ["not equal", 'if __name__ != "__main__":\n    pass\n', false],
    ["another module name", 'if __name__ == "main":\n    pass\n', false],
    ["no block", "print('hi')\n", false],
  ])("%s", (_, source, found) => {
    const out = detectPython(context({ "run.py": source }));
    expect(out.experiments.map((e) => e.id)).toEqual(found ? ["python:run.py"] : []);
  });

  it("skips unreadable files, survives syntax errors and keeps the good file", () => {
    const out = detectPython(
      context({
        "bin.py": null,
        "broken.py": 'def main(:\n    x = os.environ["A"\nif __name__ == "__main__":\n    main(\n',
        "empty.py": "",
        "good.py": MAIN,
        "notes.txt": MAIN,
      }),
    );
    expect(out.experiments.map((e) => e.id)).toEqual(["python:good.py"]);
  });

  it("stops when the time budget is spent", () => {
    let calls = 0;
    const out = detectPython(context({ "a.py": MAIN, "b.py": MAIN }, () => ++calls > 1));
    expect(out.experiments.map((e) => e.id)).toEqual(["python:a.py"]);
  });

  it("leaves out a script whose path a command line cannot hold unquoted, but keeps its variables", () => {
    const out = detectPython(context({ "my scripts/run.py": `import os\nos.environ["TOKEN"]\n${MAIN}` }));
    expect(out.experiments).toEqual([]);
    expect(out.envVars).toEqual([{ name: "TOKEN", path: "my scripts/run.py", line: 2, required: true }]);
  });

  it("takes the title and description from the module docstring", () => {
    const out = detectPython(
      context({
        "a.py": `"""\n    Train the model.\n\n    Reads data/ and writes models/.\n    """\n${MAIN}`,
        "b.py": `"""Only a title."""\n${MAIN}`,
        "c.py": `"""Title line.\n\nLong text.\n"""\nimport argparse\np = argparse.ArgumentParser(description="From the parser.")\n${MAIN}`,
        "d.py": `"""Title line.\n\nLong text.\n"""\nimport argparse\np = argparse.ArgumentParser(description=__doc__)\n${MAIN}`,
        "e.py": `x = 1\n"""not a docstring"""\n${MAIN}`,
        "f.py": `"""\nserve\n=====\n\nServes the model.\n"""\n${MAIN}`,
      }),
    );
    expect(out.experiments.map((e) => [e.title, e.description])).toEqual([
      ["Train the model.", "Reads data/ and writes models/."],
      ["Only a title.", null],
      ["Title line.", "From the parser."],
      ["Title line.", "Long text."],
      ["e.py", null],
      ["serve", "Serves the model."],
    ]);
  });
});

describe("python: argparse parameters", () => {
  const source = `
import argparse
from pathlib import Path

SIZE = 3

def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path, help="input  folder")
    parser.add_argument("extra", nargs="?", default="x")
    parser.add_argument("--learning-rate", "--lr", "-l", type=float, default=0.1, help="step (default: %(default)s, 100%%)")
    parser.add_argument("-n", type=int, default="5")
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--mode", choices=["a", "b"], default="a", required=True)
    parser.add_argument("--level", type=int, choices=[1, 2, 3])
    parser.add_argument("--dry-run", action="store_true", help="print only")
    parser.add_argument("--no-cache", dest="cache", action="store_false")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument("--color", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--use-amp", type=str2bool, default=False)
    parser.add_argument("--out", type=argparse.FileType("w"), default="out.txt")
    parser.add_argument("--ratio", default=-0.5)
    parser.add_argument("--name", default=None)
    parser.add_argument("--version", action="version", version="1")
    parser.add_argument("-h", "--help", action="help")
    parser.add_argument(OPTION_NAME, default=1)
    group = parser.add_argument_group("model")
    group.add_argument("--layers", type=int, default=2)
    exclusive = group.add_mutually_exclusive_group()
    exclusive.add_argument("--fast", action="store_true")
    parser.add_argument_group("io").add_argument("--save-dir", type=Path, default="./checkpoints")
    other.add_argument("--unrelated")
    return parser.parse_args()

${MAIN}`;

  it("reads every argument of the parser and its groups, and only those", () => {
    const [e] = detectPython(context({ "train.py": source })).experiments;
    expect(e!.parameters).toEqual([
      param({ name: "data", category: "path", cli_option: null, description: "input folder", required: true }),
      param({ name: "extra", value: "x", cli_option: null }),
      param({ name: "learning_rate", value: 0.1, category: "number", cli_option: "--learning-rate", description: "step (default: 0.1, 100%)" }),
      param({ name: "n", value: 5, category: "integer", cli_option: "-n" }),
      param({ name: "size", category: "integer" }),
      param({ name: "mode", value: "a", choices: ["a", "b"], required: true }),
      param({ name: "level", category: "integer", choices: [1, 2, 3] }),
      param({ name: "dry_run", value: false, category: "flag", cli_option: "--dry-run", description: "print only" }),
      param({ name: "cache", value: false, category: "flag", cli_option: "--no-cache" }),
      param({ name: "verbose", value: false, category: "flag" }),
      // On by default: the switch a run can pass is --no-color.
      param({ name: "no_color", value: false, category: "flag", cli_option: "--no-color" }),
      param({ name: "use_amp", value: false, category: "boolean", cli_option: "--use-amp" }),
      param({ name: "out", value: "out.txt", category: "path" }),
      param({ name: "ratio", value: -0.5, category: "number" }),
      param({ name: "name" }),
      param({ name: "layers", value: 2, category: "integer" }),
      param({ name: "fast", value: false, category: "flag" }),
      param({ name: "save_dir", value: "./checkpoints", category: "path", cli_option: "--save-dir" }),
    ]);
    expect([e!.inputs, e!.outputs]).toEqual([[], ["checkpoints", "out.txt"]]);
  });

  it("makes one experiment per sub-command, with the sub-parser's arguments and its parents'", () => {
    const cli = `"""Dataset tool."""
import argparse

def main():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seed", type=int, default=0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--verbose", action="store_true")
    sub = parser.add_subparsers(dest="cmd", required=True)
    fit = sub.add_parser("fit", help="Fit the model.", parents=[common])
    fit.add_argument("data", help="training CSV")
    fit.add_argument("--epochs", type=int, default=3)
    ev = sub.add_parser("eval")
    ev.add_argument_group("io").add_argument("--ckpt", default="model.pt")
    return parser.parse_args()

main()
`;
    const out = detectPython(context({ "tool.py": cli }));
    expect(out.experiments.map((e) => [e.id, e.entry_point, e.title, e.description])).toEqual([
      ["python:tool.py eval", "python3 tool.py eval", "tool.py eval", null],
      ["python:tool.py fit", "python3 tool.py fit", "tool.py fit", "Fit the model."],
    ]);
    expect(out.experiments[1]!.parameters).toEqual([
      param({ name: "seed", value: 0, category: "integer" }),
      param({ name: "data", cli_option: null, description: "training CSV", required: true }),
      param({ name: "epochs", value: 3, category: "integer" }),
    ]);
    expect(out.experiments[0]!.parameters).toEqual([param({ name: "ckpt", value: "model.pt" })]);
  });

  it("follows import aliases and keeps the first of two arguments with one name", () => {
    const aliased = `
from argparse import ArgumentParser as AP
import argparse as ap
class Cli:
    def __init__(self):
        self.parser = AP(description="Aliased.")
        self.parser.add_argument("--k", type=int, default=1)
        self.parser.add_argument("--k", type=int, default=2)
        other = ap.ArgumentParser()
        other.add_argument("--m", type=ap.FileType("rb"), default="in.bin")
${MAIN}`;
    const [e] = detectPython(context({ "cli.py": aliased })).experiments;
    expect(e!.description).toBe("Aliased.");
    expect(e!.parameters).toEqual([param({ name: "k", value: 1, category: "integer" }), param({ name: "m", value: "in.bin", category: "path" })]);
    expect(e!.inputs).toEqual(["in.bin"]);
  });

  it("reports nothing when there is no parser", () => {
    const [e] = detectPython(context({ "x.py": `parser.add_argument("--a")\n${MAIN}` })).experiments;
    expect(e!.parameters).toEqual([]);
  });
});

describe("python: click parameters", () => {
  const source = `
import click
from click import option as opt

@click.group()
@click.option("--debug", is_flag=True)
def tools(debug):
    pass

@click.command(help="Resize images.")
@click.argument("src", type=click.Path(exists=True))
@click.argument("rest", nargs=-1)
@click.argument("dest", required=False)
@opt("--size", "-s", default=128, help="Longest side.")
@click.option("--format", "fmt", type=click.Choice(["png", "jpg"]), default="png")
@click.option("--level", type=click.Choice([1, 2]))
@click.option("--shout/--no-shout", default=True)
@click.option("--ratio", type=click.FloatRange(0, 1), default=0.5)
@click.option("--Retries", type=click.INT)
@click.option("--user", prompt=True)
@click.option("--token", envvar=["APP_TOKEN", "TOKEN"])
@click.option("--log", type=click.File("w"), default="log.txt")
@click.option("--exact", type=bool, default=True)
@click.option(*NAMES)
@click.version_option()
@click.pass_context
def resize(ctx, src, rest, dest, size, fmt, level, shout, ratio, retries, user, token, log, exact):
    """Not used: help= wins."""

${'if __name__ == "__main__":\n    resize()\n'}`;

  it("reads the command the main block calls", () => {
    const out = detectPython(context({ "tool.py": source }));
    const [e] = out.experiments;
    expect(e!.description).toBe("Resize images.");
    expect(e!.parameters).toEqual([
      param({ name: "src", category: "path", cli_option: null, required: true }),
      param({ name: "rest", cli_option: null }),
      param({ name: "dest", cli_option: null }),
      param({ name: "size", value: 128, category: "integer", description: "Longest side." }),
      param({ name: "fmt", value: "png", cli_option: "--format", choices: ["png", "jpg"] }),
      param({ name: "level", category: "integer", choices: [1, 2] }),
      param({ name: "no_shout", value: false, category: "flag", cli_option: "--no-shout" }),
      param({ name: "ratio", value: 0.5, category: "number" }),
      param({ name: "retries", category: "integer", cli_option: "--Retries" }),
      param({ name: "user", required: true }),
      param({ name: "token" }),
      param({ name: "log", value: "log.txt", category: "path" }),
      param({ name: "exact", value: true, category: "boolean" }),
    ]);
    expect(e!.outputs).toEqual(["log.txt"]);
    expect(out.envVars).toEqual([
      { name: "APP_TOKEN", path: "tool.py", line: 21, required: false },
      { name: "TOKEN", path: "tool.py", line: 21, required: false },
    ]);
  });

  it("takes the first command when the main block calls none, and the docstring up to \\f", () => {
    const src = `
import click as c

@c.command
@c.option("--n", default=1)
def run(n):
    """Run it.

    More.
    \\f
    Hidden.
    """

if __name__ == "__main__":
    import sys
    sys.exit(run())
`;
    const [e] = detectPython(context({ "r.py": src })).experiments;
    expect([e!.description, e!.parameters]).toEqual(["Run it.\n\nMore.", [param({ name: "n", value: 1, category: "integer" })]]);
  });
});

describe("python: modules", () => {
  it("runs a package's __main__.py with -m and follows it to the module it hands over to", () => {
    const out = detectPython(
      context({
        "app/__init__.py": '"""The app.\n\nDoes things."""\n',
        "app/__main__.py": "from .cli import main\nmain()\n",
        "app/cli.py":
          'import argparse\ndef main():\n    p = argparse.ArgumentParser(description="App CLI.")\n    p.add_argument("--port", type=int, default=8080)\n',
        "src/tool/__main__.py": "from tool.commands import cli\ncli()\n",
        "src/tool/commands.py": 'import click\n@click.command()\n@click.option("--dry", is_flag=True)\ndef cli(dry):\n    pass\n',
        "my-app/__main__.py": '"""Hyphen."""\nif __name__ == "__main__":\n    pass\n',
        "__main__.py": '"""Root."""\n',
      }),
    );
    expect(out.experiments.map((e) => [e.id, e.entry_point, e.title, e.description, e.parameters.map((p) => p.name)])).toEqual([
      ["python-module:app", "python3 -m app", "The app.", "App CLI.", ["port"]],
      ["python:my-app/__main__.py", "python3 my-app/__main__.py", "Hyphen.", null, []],
      ["python-module:src.tool", "python3 -m src.tool", "src.tool", null, ["dry"]],
    ]);
    expect(out.experiments[0]).toMatchObject({ kind: "python-module", path: "app/__main__.py", command: ["python3", "-m", "app"] });
  });
});

describe("python: files read and written", () => {
  it("reports literal paths only", () => {
    const src = `
import pandas as pd, numpy
import torch, joblib
from matplotlib import pyplot as plt
from numpy import save as np_save
def main():
    open("a.txt")
    open("b.txt", "r")
    open("c.txt", "wb")
    open(file="d.txt", mode="a")
    open("e.txt", mode)
    open(f"{x}.txt", "w")
    open("https://example.com/x")
    open("-")
    pd.read_csv("./data/train.csv")
    pd.read_parquet(path="data/p.parquet")
    numpy.load("arr.npy")
    np_save("out.npy", x)
    torch.save(model, "model.pt")
    torch.load("init.pt")
    joblib.dump(clf, filename="clf.joblib")
    df.to_csv("results/{}.csv".format(1))
    df.to_csv("results/out.csv")
    plt.savefig("fig.png")
    model.save_pretrained("hf-model")
${MAIN}`;
    const [e] = detectPython(context({ "io.py": src })).experiments;
    expect(e!.inputs).toEqual(["a.txt", "arr.npy", "b.txt", "data/p.parquet", "data/train.csv", "init.pt"]);
    expect(e!.outputs).toEqual(["c.txt", "clf.joblib", "d.txt", "fig.png", "hf-model", "model.pt", "out.npy", "results/out.csv"]);
  });

  it.each<[string, string, string[], string[]]>([
    ["os.path.join of an option", 'torch.save(m, os.path.join(args.out, "model.pt"))', [], ["runs/a", "runs/a/model.pt"]],
    ["an f-string", 'plt.savefig(f"{args.out}/loss.png")', [], ["runs/a", "runs/a/loss.png"]],
    ["pathlib's /", 'df.to_csv(Path(args.out) / "m.csv")', [], ["runs/a", "runs/a/m.csv"]],
    ["open for writing, a constant", 'open(os.path.join(LOGS, "log.txt"), "w")', [], ["logs/log.txt", "runs/a"]],
    ["reading through an option", "pd.read_csv(args.data)", ["data/x.csv"], ["runs/a"]],
    ["a method of a computed frame", 'pd.concat(rows).to_markdown("r.md")', [], ["r.md", "runs/a"]],
    ["an unknown part", "torch.save(m, os.path.join(args.out, name))", [], ["runs/a"]],
    ["a format spec", 'open(f"{args.out:>10}", "w")', [], ["runs/a"]],
    ["a glob", 'open(f"{args.out}/*.txt")', [], ["runs/a"]],
  ])("builds paths from the program's values: %s", (_, line, inputs, outputs) => {
    const src = `import argparse, os\nimport torch\nimport pandas as pd\nfrom pathlib import Path\nfrom matplotlib import pyplot as plt\nLOGS = "logs"\np = argparse.ArgumentParser()\np.add_argument("--out", default="runs/a")\np.add_argument("--data", default="data/x.csv")\np.add_argument("--dataset", default="cifar10")\nargs = p.parse_args()\n${line}\n`;
    const [e] = detectPython(context({ "t.py": src })).experiments;
    expect([e!.inputs.filter((i) => i !== "data/x.csv" || inputs.includes(i)), e!.outputs]).toEqual([inputs, outputs]);
  });

  it("counts the defaults of parameters named as inputs or outputs", () => {
    const src = `
import argparse
p = argparse.ArgumentParser()
p.add_argument("--data-dir", default="data/")
p.add_argument("--input", type=argparse.FileType(), default="in.csv")
p.add_argument("--output_path", default="out/preds.csv")
p.add_argument("--model-dir", default="models")
p.add_argument("--train", default="train.csv")
p.add_argument("--output-format", default="json")
${MAIN}`;
    const [e] = detectPython(context({ "p.py": src })).experiments;
    expect([e!.inputs, e!.outputs]).toEqual([
      ["data/", "in.csv"],
      ["models", "out/preds.csv"],
    ]);
  });
});

describe("python: environment variables", () => {
  it("reads every form, skips writes, test files and non-literal names", () => {
    const src = `import os
from os import environ as env, getenv
import os as o
a = os.environ["A"]
b = os.environ.get("B")
c = os.environ.get("C", "x")
d = os.getenv("D")
e = os.getenv("E", "1")
f = getenv("F", default=None)
g = env["G"]
h = o.environ.setdefault("H", "1")
os.environ["WRITTEN"] = "1"
del os.environ["DELETED"]
os.environ["APPENDED"] += ":x"
i = os.environ[name]
j = os.environ.pop("J", None)
k = os.environ.pop("K")
`;
    const out = detectPython(context({ "conf.py": src, "tests/helpers.py": src, "pkg/test_x.py": src, "pkg/x_test.py": src, "conftest.py": src }));
    expect(out.envVars).toEqual(
      (
        [
          ["A", 4, true],
          ["B", 5, false],
          ["C", 6, false],
          ["D", 7, true],
          ["E", 8, false],
          ["F", 9, false],
          ["G", 10, true],
          ["H", 11, false],
          ["APPENDED", 14, true],
          ["J", 16, false],
          ["K", 17, true],
        ] as const
      ).map(([name, line, required]): EnvVarUse => ({ name, path: "conf.py", line, required })),
    );
    expect(out.experiments).toEqual([]);
  });
});

describe("python: reads the program may do without", () => {
  it.each([
    ["plain subscript in a function", 'def main():\n    t = os.environ["X"]\n', true],
    ["in the main block", 'if __name__ == "__main__":\n    t = os.environ["X"]\n', true],
    ["guarded by membership", 'if "X" in os.environ:\n    t = os.environ["X"]\n', false],
    ["in an if branch (ddp)", 'if ddp:\n    rank = int(os.environ["X"])\n', false],
    ["in an else branch", 'if a:\n    pass\nelse:\n    t = os.environ["X"]\n', false],
    ["in a conditional expression", 't = os.environ["X"] if a else None\n', false],
    ["try/except KeyError", 'try:\n    t = os.environ["X"]\nexcept KeyError:\n    t = None\n', false],
    ["try/except (KeyError, ValueError)", 'try:\n    t = int(os.environ["X"])\nexcept (KeyError, ValueError):\n    t = 1\n', false],
    ["try/except ValueError only", 'try:\n    t = int(os.environ["X"])\nexcept ValueError:\n    t = 1\n', true],
    ["getenv with or", 't = os.getenv("X") or "d"\n', false],
    ["getenv tested", 'if os.getenv("X"):\n    pass\n', false],
    ["getenv compared", 'debug = os.getenv("X") == "1"\n', false],
    ["getenv assigned", 't = os.getenv("X")\n', true],
    ["getenv stored, then tested", 'p = os.getenv("X")\nif p:\n    print(p)\n', false],
    ["subscript in a condition still raises", 'if os.environ["X"] == "1":\n    pass\n', true],
  ])("%s", (_name, body, required) => {
    const out = detectPython(context({ "conf.py": `import os\n${body}` }));
    expect(out.envVars.map((u) => [u.name, u.required])).toEqual([["X", required]]);
  });
});

describe("python: pydantic settings", () => {
  it("reads each field as a variable, required without a default", () => {
    const src = `from typing import Optional
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="APP_")
    database_url: str
    port: int = 8000
    api_key: str = Field(..., alias="OPENAI_API_KEY")
    timeout: float = Field(default=3.0)
    debug: Optional[bool] = None

settings = Settings()
`;
    const out = detectPython(context({ "config.py": src }));
    expect(out.envVars.map((u) => [u.name, u.required])).toEqual([
      ["APP_DATABASE_URL", true],
      ["APP_PORT", false],
      ["OPENAI_API_KEY", true],
      ["APP_TIMEOUT", false],
      ["APP_DEBUG", false],
    ]);
  });
});

describe("python: settings classes and django-environ", () => {
  it("a subclass of a settings class is one too, with its base's env_prefix", () => {
    const src = `from pydantic_settings import BaseSettings, SettingsConfigDict

class _Base(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SHOP_")

class Jobs(_Base):
    bucket: str
    size: int = 5

class Other(_Base):
    model_config = SettingsConfigDict(env_prefix="")
    token: str
`;
    const out = detectPython(context({ "config.py": src }));
    expect(out.envVars.map((u) => [u.name, u.required])).toEqual([
      ["SHOP_BUCKET", true],
      ["SHOP_SIZE", false],
      ["TOKEN", true],
    ]);
  });

  it("reads django-environ: env() and casts without a default are required; a scheme's or a keyword's default is not", () => {
    const src = `import environ

env = environ.Env(DEBUG=(bool, False), MODE=(str,))
SECRET_KEY = env("SECRET_KEY")
DEBUG = env("DEBUG")
MODE = env("MODE")
HOSTS = env.list("HOSTS", default=[])
NAME = env.str("NAME", "shop")
DATABASES = {"default": env.db()}
CACHE = env.cache_url("REDIS_URL", default="locmem://")
if DEBUG:
    TOOLBAR = env("TOOLBAR_KEY")
`;
    const out = detectPython(context({ "settings.py": src }));
    expect(out.envVars.map((u) => [u.name, u.required])).toEqual([
      ["SECRET_KEY", true],
      ["DEBUG", false],
      ["MODE", true],
      ["HOSTS", false],
      ["NAME", false],
      ["DATABASE_URL", true],
      ["REDIS_URL", false],
      ["TOOLBAR_KEY", false],
    ]);
  });
});

describe("python: frameworks", () => {
  it("names well-known libraries imported at the top level of non-test files", () => {
    const out = detectPython(
      context({
        "a.py": "import torch.nn as nn\nfrom sklearn.linear_model import Ridge\ntry:\n    import pytorch_lightning as pl\nexcept ImportError:\n    pl = None\n",
        "b.py": "def f():\n    import tensorflow\nfrom . import jax\nimport numpyro\n",
        "tests/test_a.py": "import flask\n",
      }),
    );
    expect(out.frameworks).toEqual(["PyTorch", "PyTorch Lightning", "scikit-learn"]);
  });
});

describe("python literals", () => {
  it.each([
    ['"a\\tb"', "a\tb"],
    ["r'a\\tb'", "a\\tb"],
    ["\"a\" 'b'", "ab"],
    ['f"{{x}}"', "{x}"],
    ['f"{x}"', null],
    ['b"x"', null],
    ['"\\x41\\u00e9\\101"', "Aé" + "A"],
    ["1_000", 1000],
    ["0x10", 16],
    ["-3", -3],
    ["1e-3", 0.001],
    ["2j", null],
    ["True", true],
    ["None", null],
    ["x", undefined],
  ])("%s", (src, expected) => {
    const lit = syntax.parse("python", `v = ${src}\n`, (root) => literal(root.firstNamedChild?.firstNamedChild?.childForFieldName("right")))?.value;
    if (expected === undefined) expect(lit).toBeNull();
    else if (expected === null && src !== "None") expect(lit).toBeNull();
    else expect(lit?.value).toEqual(expected);
  });
});

describe("python: scripts without a main block", () => {
  const ids = (files: Record<string, string>) => detectPython(context(files)).experiments.map((e) => e.id);
  it.each<[string, Record<string, string>, string[]]>([
    [
      "module-level parse_args",
      { "train.py": 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--lr", type=float, default=0.1)\nargs = p.parse_args()\n' },
      ["python:train.py"],
    ],
    [
      "a main() called at the bottom that parses",
      {
        "run.py":
          "import argparse\ndef get_args():\n    p = argparse.ArgumentParser()\n    return p.parse_args()\ndef main():\n    args = get_args()\nmain()\n",
      },
      ["python:run.py"],
    ],
    ["fire.Fire", { "cli.py": "import fire\ndef hello(name='x'):\n    print(name)\nfire.Fire(hello)\n" }, ["python:cli.py"]],
    ["a function that parses, never called", { "lib.py": "import argparse\ndef get_args():\n    return argparse.ArgumentParser().parse_args()\n" }, []],
    ["a call inside a def does not count", { "lib.py": "import argparse\ndef main():\n    def inner():\n        pass\n    return 1\n" }, []],
    [
      "a shared options module another file imports",
      {
        "options.py": "import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--lr', type=float, default=0.1)\nopt = parser.parse_args()\n",
        "train.py": "from options import opt\nprint(opt.lr)\nif __name__ == '__main__':\n    pass\n",
      },
      ["python:train.py"],
    ],
    [
      "scripts under tests/ and fixtures/ are fixtures",
      { "tests/fixtures/job.py": MAIN, "testdata/gen.py": MAIN, "examples/fixtures/x.py": MAIN, "examples/job.py": MAIN },
      ["python:examples/job.py"],
    ],
  ])("%s", (_name, files, want) => expect(ids(files)).toEqual(want));

  it("reads the parameters of module-level argparse", () => {
    const [e] = detectPython(
      context({ "train.py": 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--lr", type=float, default=0.1)\nargs = p.parse_args()\n' }),
    ).experiments;
    expect(e!.parameters).toEqual([param({ name: "lr", value: 0.1, category: "number" })]);
  });

  it("titles main.py and run.py with their folder, and takes a parser's description before a file name", () => {
    const described = 'import argparse\np = argparse.ArgumentParser(description="MNIST with DDP. Runs on two GPUs.")\n' + MAIN;
    const out = detectPython(context({ "examples/mnist/main.py": MAIN, "tools/convert.py": MAIN, "examples/ddp/main.py": described }));
    expect(out.experiments.map((e) => e.title)).toEqual(["MNIST with DDP.", "mnist/main.py", "convert.py"]);
  });
});

describe("python: click groups and Typer apps", () => {
  it("makes one experiment per command of a click group", () => {
    const src = `import click

@click.group()
@click.option("--debug", is_flag=True)
def cli(debug):
    """Data tools."""

@cli.command()
@click.argument("url")
@click.option("--retries", default=3)
def download_cmd(url, retries):
    """Download a dataset."""

@click.command("clean")
@click.option("--dry-run", is_flag=True)
def clean_up(dry_run):
    pass

cli.add_command(clean_up)

if __name__ == "__main__":
    cli()
`;
    const out = detectPython(context({ "data.py": src }));
    expect(out.experiments.map((e) => [e.id, e.entry_point, e.description])).toEqual([
      ["python:data.py clean", "python3 data.py clean", "Data tools."],
      ["python:data.py download", "python3 data.py download", "Download a dataset."],
    ]);
    expect(out.experiments[1]!.parameters).toEqual([
      param({ name: "url", cli_option: null, required: true }),
      param({ name: "retries", value: 3, category: "integer" }),
    ]);
    expect(out.experiments[0]!.parameters).toEqual([param({ name: "dry_run", value: false, category: "flag", cli_option: "--dry-run" })]);
  });

  it("reads a Typer app's commands from their signatures", () => {
    const src = `from pathlib import Path
from typing import Annotated, Optional
import typer

app = typer.Typer()

@app.command()
def train(data: Path, epochs: int = 10, lr: float = typer.Option(0.001, "--learning-rate", help="Step size."), amp: bool = False, shuffle: bool = True):
    """Train the model."""

@app.command("predict")
def predict_cmd(model: Annotated[str, typer.Argument(help="checkpoint")], batch: Annotated[int, typer.Option(help="Batch.")] = 8, out: Optional[str] = None):
    pass

if __name__ == "__main__":
    app()
`;
    const out = detectPython(context({ "cli.py": src }));
    expect(out.experiments.map((e) => e.id)).toEqual(["python:cli.py predict", "python:cli.py train"]);
    expect(out.experiments[1]!.parameters).toEqual([
      param({ name: "data", category: "path", cli_option: null, required: true }),
      param({ name: "epochs", value: 10, category: "integer" }),
      param({ name: "lr", value: 0.001, category: "number", cli_option: "--learning-rate", description: "Step size." }),
      param({ name: "amp", value: false, category: "flag" }),
      param({ name: "no_shuffle", value: false, category: "flag", cli_option: "--no-shuffle" }),
    ]);
    expect(out.experiments[0]!.parameters).toEqual([
      param({ name: "model", cli_option: null, description: "checkpoint", required: true }),
      param({ name: "batch", value: 8, category: "integer", description: "Batch." }),
      param({ name: "out" }),
    ]);
  });

  it("runs a single-command Typer app and typer.run without a command word", () => {
    const single = "import typer\napp = typer.Typer()\n@app.command()\ndef main(name: str, count: int = 1):\n    pass\nif __name__ == '__main__':\n    app()\n";
    const run = "import typer\ndef main(name: str = 'x'):\n    pass\ntyper.run(main)\n";
    const out = detectPython(context({ "a.py": single, "b.py": run }));
    expect(out.experiments.map((e) => [e.id, e.parameters.map((p) => p.name)])).toEqual([
      ["python:a.py", ["name", "count"]],
      ["python:b.py", ["name"]],
    ]);
  });
});

describe("python: Fire and configurator scripts", () => {
  it("reads a fire.Fire function's signature as options", () => {
    const src =
      "import fire\n\ndef main(data_dir, batch_size=32, lr=3e-4, compile=True, wandb=False):\n    pass\n\nif __name__ == '__main__':\n    fire.Fire(main)\n";
    const [e] = detectPython(context({ "sample.py": src })).experiments;
    expect(e!.parameters).toEqual([
      param({ name: "data_dir", cli_option: "--data_dir", required: true }),
      param({ name: "batch_size", value: 32, category: "integer", cli_option: "--batch_size" }),
      param({ name: "lr", value: 0.0003, category: "number", cli_option: "--lr" }),
      param({ name: "nocompile", value: false, category: "flag", cli_option: "--nocompile" }),
      param({ name: "wandb", value: false, category: "flag", cli_option: "--wandb" }),
    ]);
  });

  it("takes the globals a configurator may override as --key=value parameters", () => {
    const src = `import os
out_dir = 'out'
eval_interval = 2000
learning_rate = 6e-4
compile = True
device = os.environ.get("DEVICE", "cuda")
config_keys = [k for k in globals()]
exec(open('configurator.py').read())
late = 1
`;
    const out = detectPython(context({ "train.py": src, "configurator.py": "import sys\nfor arg in sys.argv[1:]:\n    pass\n" }));
    expect(out.experiments.map((e) => e.id)).toEqual(["python:train.py"]);
    expect(out.experiments[0]!.parameters).toEqual([
      param({ name: "out_dir", value: "out", cli_option: "--out_dir=" }),
      param({ name: "eval_interval", value: 2000, category: "integer", cli_option: "--eval_interval=" }),
      param({ name: "learning_rate", value: 0.0006, category: "number", cli_option: "--learning_rate=" }),
      param({ name: "compile", value: true, category: "boolean", cli_option: "--compile=" }),
    ]);
  });
});

describe("python: defaults written as expressions, and comments as descriptions", () => {
  it("evaluates constant arithmetic, takes a conditional's first constant with a note, and reads inline comments where there is no help", () => {
    const src = `import argparse
import torch
p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=5 * 8000)  # optimizer steps
p.add_argument("--buffer", default=64 * 1024 * 1024)
p.add_argument("--lr", default=6e-4 / 10, help="peak rate")  # not this: help wins
p.add_argument("--dtype", default="bfloat16" if torch.cuda.is_available() else "float16")
p.add_argument("--seed", type=int, default=1337)  # noqa: E501
args = p.parse_args()
`;
    const [e] = detectPython(context({ "train.py": src })).experiments;
    expect(e!.parameters).toEqual([
      param({ name: "steps", value: 40000, category: "integer", description: "optimizer steps" }),
      param({ name: "buffer", value: 67108864, category: "integer" }),
      param({ name: "lr", value: 6e-4 / 10, category: "number", description: "peak rate" }),
      param({ name: "dtype", value: "bfloat16", description: '(default: "bfloat16" if torch.cuda.is_available(), else "float16")' }),
      param({ name: "seed", value: 1337, category: "integer" }),
    ]);
  });

  it("gives a configurator script's globals their comments and a positional config file from the folder the README uses", () => {
    const src = "batch_size = 16  # sequences per micro-batch\nmax_iters = 3 * 1000\nexec(open('configurator.py').read())\n";
    const out = detectPython(
      context({
        "train.py": src,
        "configurator.py": "import sys\n",
        "README.md": "python train.py presets/small.py --batch_size=8\n",
        "presets/small.py": "batch_size = 8\n",
        "presets/large.py": "batch_size = 64\n",
        "presets/nested/x.py": "",
        "configs/other.py": "",
      }),
    );
    expect(out.experiments[0]!.parameters.map((p) => [p.name, p.value, p.category, p.cli_option, p.choices, p.description])).toEqual([
      ["config", null, "path", null, ["presets/large.py", "presets/small.py"], expect.any(String)],
      ["batch_size", 16, "integer", "--batch_size=", null, "sequences per micro-batch"],
      ["max_iters", 3000, "integer", "--max_iters=", null, null],
    ]);
  });

  it("reads click's --x/--no-x with default=None as a tri-state: a flag with no default", () => {
    const src = `import click
@click.command()
@click.option("--compile/--no-compile", default=None, help="compile first")
@click.option("--fast/--slow", default=False)
def main(compile, fast):
    pass
if __name__ == "__main__":
    main()
`;
    const [e] = detectPython(context({ "export.py": src })).experiments;
    expect(e!.parameters).toEqual([
      param({ name: "compile", value: null, category: "flag", description: "compile first (unset by default; --no-compile turns it off)" }),
      param({ name: "fast", value: false, category: "flag" }),
    ]);
  });
});

describe("python: options parsed in a helper", () => {
  const OPTIONS = `import argparse

def get_parser():
    p = argparse.ArgumentParser(description="Train things")
    p.add_argument("--epochs", type=int, default=10)
    return p

def get_args():
    return get_parser().parse_args()

def get_eval_args():
    p = argparse.ArgumentParser()
    p.add_argument("--weights", required=True)
    return p.parse_args()
`;
  const names = (files: Record<string, string>) =>
    Object.fromEntries(detectPython(context(files)).experiments.map((e) => [e.id, e.parameters.map((p) => p.name)]));

  it.each<[string, Record<string, string>, Record<string, string[]>]>([
    [
      "from-imported, in a main block",
      { "utils/options.py": OPTIONS, "train.py": `from utils.options import get_args\n${MAIN.replace("main()", "args = get_args()")}` },
      { "python:train.py": ["epochs"] },
    ],
    [
      "a module's attribute",
      { "utils/options.py": OPTIONS, "eval.py": `from utils import options\n${MAIN.replace("main()", "args = options.get_eval_args()")}` },
      { "python:eval.py": ["weights"] },
    ],
    [
      "import of the module",
      { "options.py": OPTIONS, "eval.py": `import options\n${MAIN.replace("main()", "args = options.get_eval_args()")}` },
      { "python:eval.py": ["weights"] },
    ],
    [
      "relative, beside the script",
      { "tools/opts.py": OPTIONS, "tools/run.py": `from .opts import get_args\n${MAIN.replace("main()", "a = get_args()")}` },
      { "python:tools/run.py": ["epochs"] },
    ],
    [
      "the script's folder on sys.path",
      { "tools/opts.py": OPTIONS, "tools/run.py": `from opts import get_args\n${MAIN.replace("main()", "a = get_args()")}` },
      { "python:tools/run.py": ["epochs"] },
    ],
    [
      "a parser the helper returns, extended by the script at the top level",
      {
        "utils/options.py": OPTIONS,
        "ft.py":
          "from utils.options import get_parser\nparser = get_parser()\nparser.add_argument('--freeze', action='store_true')\nargs = parser.parse_args()\n",
      },
      { "python:ft.py": ["epochs", "freeze"] },
    ],
    [
      "a top-level args = helper() with no main block",
      { "utils/options.py": OPTIONS, "go.py": "from utils.options import get_args\nargs = get_args()\nprint(args.epochs)\n" },
      { "python:go.py": ["epochs"] },
    ],
    ["a top-level call that is not the options", { "utils/options.py": OPTIONS, "lib.py": "from utils.options import get_args\nlog = get_args()\n" }, {}],
    [
      "a helper that only builds a parser does not make a script",
      { "utils/options.py": OPTIONS, "lib.py": "from utils.options import get_parser\nargs = get_parser()\n" },
      {},
    ],
    [
      "a helper that is not in the repository",
      { "train.py": `from somewhere import get_args\n${MAIN.replace("main()", "args = get_args()")}` },
      { "python:train.py": [] },
    ],
  ])("%s", (_, files, want) => {
    const got = names(files);
    for (const k of Object.keys(got)) if (!(k in want)) delete got[k];
    expect(got).toEqual(want);
    expect(Object.keys(names(files)).filter((k) => !k.includes("options") && !k.includes("opts"))).toEqual(Object.keys(want));
  });

  it("adds the options a script's main block adds to a parser its own helper builds", () => {
    const src = `import argparse
def build():
    p = argparse.ArgumentParser()
    p.add_argument("--root")
    return p
if __name__ == "__main__":
    parser = build()
    parser.add_argument("--workers", type=int, default=2)
    group = parser.add_argument_group("io")
    group.add_argument("--out")
    args = parser.parse_args()
`;
    expect(names({ "prep.py": src })).toEqual({ "python:prep.py": ["root", "workers", "out"] });
  });
});

describe("python: web applications", () => {
  const web = (files: Record<string, string>) =>
    detectPython(context(files)).experiments.map((e) => [e.id, e.entry_point, e.parameters.map((p) => `${p.name}=${String(p.value)}`).join(" ")]);
  it.each<[string, Record<string, string>, string[][]]>([
    [
      "a Flask app at the top level",
      { "web/app.py": "from flask import Flask\napp = Flask(__name__)\n" },
      [["python-module:flask --app web.app run", "python3 -m flask --app web.app run", "host=127.0.0.1 port=5000 debug=false"]],
    ],
    [
      "a Flask app under another name",
      { "site.py": "import flask\nserver = flask.Flask('site')\n" },
      [["python-module:flask --app site:server run", "python3 -m flask --app site:server run", "host=127.0.0.1 port=5000 debug=false"]],
    ],
    [
      "a Flask factory",
      { "shop/__init__.py": "from flask import Flask\ndef create_app():\n    app = Flask(__name__)\n    return app\n" },
      [["python-module:flask --app shop run", "python3 -m flask --app shop run", "host=127.0.0.1 port=5000 debug=false"]],
    ],
    [
      "a FastAPI app",
      { "svc/main.py": "from fastapi import FastAPI\napi = FastAPI()\n" },
      [["python-module:uvicorn svc.main:api", "python3 -m uvicorn svc.main:api", "host=127.0.0.1 port=8000 reload=false"]],
    ],
    [
      "an app whose file runs it itself stays a script",
      { "app.py": 'from flask import Flask\napp = Flask(__name__)\nif __name__ == "__main__":\n    app.run(port=8080)\n' },
      [["python:app.py", "python3 app.py", ""]],
    ],
    ["an app in a folder that is not a module name", { "my-site/app.py": "from flask import Flask\napp = Flask(__name__)\n" }, []],
    ["an app under tests", { "tests/app.py": "from flask import Flask\napp = Flask(__name__)\n" }, []],
    ["a Flask inside a function, not a factory", { "x.py": "from flask import Flask\ndef build():\n    return Flask(__name__)\n" }, []],
    [
      "Django's manage.py and its runserver",
      {
        "manage.py":
          'import os, sys\ndef main():\n    from django.core.management import execute_from_command_line\n    execute_from_command_line(sys.argv)\nif __name__ == "__main__":\n    main()\n',
      },
      [
        ["python:manage.py", "python3 manage.py", ""],
        ["python:manage.py runserver", "python3 manage.py runserver", "addrport=127.0.0.1:8000"],
      ],
    ],
  ])("%s", (_, files, want) => expect(web(files)).toEqual(want));
});

describe("python: launchers and sub-folder READMEs", () => {
  const TRAIN = `import argparse\n${MAIN.replace("main()", "argparse.ArgumentParser().parse_args()")}`;
  it.each<[string, string, string]>([
    ["torchrun", "torchrun --nproc_per_node=4 train.py --epochs 3", "torchrun --nproc_per_node=4 train.py"],
    ["torchrun, options with separate values", "torchrun --nnodes 1 --nproc_per_node 8 train.py", "torchrun --nnodes 1 --nproc_per_node 8 train.py"],
    ["torch.distributed.run", "python -m torch.distributed.run --nproc_per_node=2 ./train.py", "python3 -m torch.distributed.run --nproc_per_node=2 train.py"],
    ["accelerate launch", "accelerate launch --config_file cfg.yaml train.py", "accelerate launch --config_file cfg.yaml train.py"],
    ["deepspeed", "deepspeed --num_gpus 2 train.py --deepspeed ds.json", "deepspeed --num_gpus 2 train.py"],
    ["continued lines", "torchrun \\\n  --standalone \\\n  train.py", "torchrun --standalone train.py"],
    ["shell in the options: left alone", "torchrun --nproc_per_node=$NGPU train.py", "python3 train.py"],
    ["another script", "torchrun --standalone other.py", "python3 train.py"],
  ])("%s", (_, line, entryPoint) => {
    const out = detectPython(context({ "README.md": `Run:\n\n    ${line}\n`, "train.py": TRAIN }));
    expect(out.experiments.map((e) => e.entry_point)).toEqual([entryPoint]);
  });

  it("takes scripts a sub-folder's README runs, from that folder", () => {
    const out = detectPython(
      context({
        "series/README.md": "cd series\npython make_dataset.py\npython ../tools/fetch.py\n",
        "series/make_dataset.py": "import numpy as np\nnp.save('w.npy', np.zeros(3))\n",
        "tools/fetch.py": "print('fetching')\n",
        "series/lib.py": "def f():\n    pass\n",
      }),
    );
    expect(out.experiments.map((e) => [e.id, e.entry_point])).toEqual([["python:series/make_dataset.py", "cd series && python3 make_dataset.py"]]);
  });
});

describe("python: scripts the README says to run", () => {
  it("adds a top-level script the README runs, not a library module it does not", () => {
    const out = detectPython(
      context({
        "README.md": "First run `python data/prepare.py`, then `python3 ./tools/fetch.py`.\n",
        "data/prepare.py": "import os\nwith open('x', 'w') as f:\n    f.write('1')\n",
        "tools/fetch.py": "def fetch():\n    pass\n",
        "lib/setup_logging.py": "import logging\nlogging.basicConfig()\n",
      }),
    );
    expect(out.experiments.map((e) => e.id)).toEqual(["python:data/prepare.py"]);
  });
});
