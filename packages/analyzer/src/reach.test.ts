import { describe, expect, it } from "vitest";
import type { EnvVarUse, Experiment, ExperimentKind } from "./model.ts";
import { attributeRequiredEnv } from "./reach.ts";
import { memoryContext } from "./testing/memory-context.ts";

const experiment = (kind: ExperimentKind, id: string, path: string, command: string[]): Experiment => ({
  id,
  title: id,
  description: null,
  entry_point: command.join(" "),
  command,
  language: "x",
  kind,
  path,
  inputs: [],
  outputs: [],
  parameters: [],
});
const need = (name: string, path: string, required = true): EnvVarUse => ({ name, path, line: 1, required });

/** Each experiment's required_env_vars after attribution, by id. */
function attribute(files: Record<string, string>, experiments: Experiment[], uses: EnvVarUse[]) {
  const union = attributeRequiredEnv(memoryContext(files), experiments, uses);
  return { byId: Object.fromEntries(experiments.map((e) => [e.id, e.required_env_vars])), union: [...union].sort() };
}

describe("attributeRequiredEnv", () => {
  it("follows Python imports (absolute, relative, from-imported submodules, the script's folder) and Django's settings module", () => {
    const files = {
      "train.py": "import os\nfrom lib.config import load\n",
      "serve.py": "from app import views\n",
      "lib/__init__.py": "",
      "lib/config.py": "from .secrets import token\n",
      "lib/secrets.py": "",
      "app/__init__.py": "",
      "app/views.py": "",
      "tools/report.py": "import helpers\n",
      "tools/helpers.py": "",
      "manage.py": 'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_cfg.settings")\n',
      "site_cfg/settings.py": "",
    };
    const { byId, union } = attribute(
      files,
      [
        experiment("python-script", "train", "train.py", ["python3", "train.py"]),
        experiment("python-script", "serve", "serve.py", ["python3", "serve.py"]),
        experiment("python-script", "report", "tools/report.py", ["python3", "tools/report.py"]),
        experiment("python-script", "manage", "manage.py", ["python3", "manage.py"]),
      ],
      [need("TOKEN", "lib/secrets.py"), need("VIEWS_KEY", "app/views.py"), need("REPORT_DSN", "tools/helpers.py"), need("SECRET_KEY", "site_cfg/settings.py")],
    );
    expect(byId).toEqual({ train: ["TOKEN"], serve: ["VIEWS_KEY"], report: ["REPORT_DSN"], manage: ["SECRET_KEY"] });
    expect(union).toEqual(["REPORT_DSN", "SECRET_KEY", "TOKEN", "VIEWS_KEY"]);
  });

  it("follows npm scripts to their files, other scripts, built output's source, Prisma and compose", () => {
    const files = {
      "package.json": JSON.stringify({
        scripts: {
          start: "node dist/server.js",
          dev: "npm run start",
          worker: "tsx src/worker.ts",
          "db:up": "docker compose up -d",
          lint: "eslint .",
        },
      }),
      "src/server.ts": 'import { db } from "./db.js";\n',
      "src/db.ts": 'import { PrismaClient } from "@prisma/client";\n',
      "src/worker.ts": 'const x = require("./queue");\n',
      "src/queue/index.js": "",
      "prisma/schema.prisma": "",
      "docker-compose.yml": "",
    };
    const { byId } = attribute(
      files,
      ["start", "dev", "worker", "db:up", "lint"].map((n) => experiment("npm-script", n, "package.json", ["npm", "run", n, "--"])),
      [need("DATABASE_URL", "prisma/schema.prisma"), need("QUEUE_URL", "src/queue/index.js"), need("PG_PASSWORD", "docker-compose.yml")],
    );
    expect(byId).toEqual({ start: ["DATABASE_URL"], dev: ["DATABASE_URL"], worker: ["QUEUE_URL"], "db:up": ["PG_PASSWORD"], lint: [] });
  });

  it("follows a make target's prerequisites and recipe, a Go program's packages and a shell script's commands", () => {
    const files = {
      Makefile: ".PHONY: train data clean\ntrain: data\n\tpython3 train.py\ndata:\n\tbash scripts/fetch.sh\nclean:\n\trm -rf out\n",
      "train.py": "",
      "scripts/fetch.sh": "python3 -m fetcher --all\n",
      "fetcher/__main__.py": "",
      "go.mod": "module example.com/svc\n",
      "cmd/api/main.go": 'package main\nimport "example.com/svc/internal/store"\n',
      "internal/store/store.go": "package store\n",
      "cmd/tool/main.go": "package main\n",
    };
    const { byId } = attribute(
      files,
      [
        experiment("make-target", "make:train", "Makefile", ["make", "train"]),
        experiment("make-target", "make:clean", "Makefile", ["make", "clean"]),
        experiment("go-main", "go:api", "cmd/api", ["go", "run", "./cmd/api"]),
        experiment("go-main", "go:tool", "cmd/tool", ["go", "run", "./cmd/tool"]),
      ],
      [need("WANDB_KEY", "train.py"), need("BUCKET", "fetcher/__main__.py"), need("DSN", "internal/store/store.go")],
    );
    expect(byId).toEqual({ "make:train": ["BUCKET", "WANDB_KEY"], "make:clean": [], "go:api": ["DSN"], "go:tool": [] });
  });

  it("handles import cycles and a chain longer than any call stack", () => {
    const chain: Record<string, string> = { "a.py": "import b\n", "b.py": "import a\nimport c\n", "c.py": "import m0\n" };
    for (let i = 0; i < 20_000; i++) chain[`m${i}.py`] = `import m${i + 1}\n`;
    const { byId } = attribute(
      chain,
      [experiment("python-script", "a", "a.py", ["python3", "a.py"]), experiment("python-script", "c", "c.py", ["python3", "c.py"])],
      [need("A", "a.py"), need("END", "m19999.py")],
    );
    expect(byId).toEqual({ a: ["A", "END"], c: ["END"] });
  });

  it("never takes a template's, an optional read's or a launcher's variable", () => {
    const { byId, union } = attribute(
      { "train.py": "" },
      [experiment("python-script", "train", "train.py", ["python3", "train.py"])],
      [need("A", ".env.example"), need("B", "train.py", false), need("LOCAL_RANK", "train.py"), need("C", "train.py")],
    );
    expect(byId).toEqual({ train: ["C"] });
    expect(union).toEqual(["C"]);
  });
});
