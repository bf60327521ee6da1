import type { Experiment, Parameter } from "../../model.ts";
import { children, descendants, type Node } from "../../syntax.ts";
import { qualifiedName, type PythonImports } from "./names.ts";
import { holdsVariable, readProcfile, withoutPlatformOptions } from "../../procfile.ts";

// Web applications as entries. A Flask or FastAPI application defined at a
// module's top level (`app = Flask(__name__)`, `app = FastAPI()`, a Flask
// `create_app()` factory) is run by a server, not by `python app.py`: `flask
// --app <module> run` and `uvicorn <module>:<app>`, each with the host and
// port it listens on. Django's manage.py runs its development server with
// `runserver [addrport]`.

export interface WebApp {
  framework: "flask" | "fastapi";
  /** The module-level variable holding the application; null for a Flask factory (`create_app`). */
  variable: string | null;
}

const CONSTRUCTORS: Record<string, WebApp["framework"]> = { "flask.Flask": "flask", "fastapi.FastAPI": "fastapi" };

/** The application a module defines at its top level, if any. */
export function webApp(root: Node, imports: PythonImports): WebApp | null {
  for (const stmt of children(root)) {
    const a = stmt.type === "expression_statement" ? stmt.firstNamedChild : null;
    if (a?.type === "assignment") {
      const left = a.childForFieldName("left");
      const right = a.childForFieldName("right");
      const framework = right?.type === "call" ? CONSTRUCTORS[qualifiedName(right.childForFieldName("function"), imports) ?? ""] : undefined;
      if (framework && left?.type === "identifier") return { framework, variable: left.text };
    }
    const def = stmt.type === "decorated_definition" ? stmt.childForFieldName("definition") : stmt;
    if (def?.type === "function_definition" && /^(create|make)_app$/.test(def.childForFieldName("name")?.text ?? "")) {
      const builds = descendants(def, "call").some((c) => CONSTRUCTORS[qualifiedName(c.childForFieldName("function"), imports) ?? ""] === "flask");
      if (builds) return { framework: "flask", variable: null };
    }
  }
  return null;
}

/** Whether the file hands Django's command line its arguments (`execute_from_command_line(sys.argv)`), as manage.py does. */
export function runsDjangoCommands(root: Node, imports: PythonImports): boolean {
  return descendants(root, "call").some((c) => {
    const fn = c.childForFieldName("function");
    const name = qualifiedName(fn, imports) ?? fn?.text ?? "";
    return name.endsWith("execute_from_command_line");
  });
}

const IDENTIFIER = /^[\p{L}_][\p{L}\p{N}_]*$/u;

/** `a/b/app.py` → "a.b.app", importable from the repository's root; null when a folder is not a name. */
export function moduleOf(path: string): string | null {
  const parts = path.replace(/\.py$/, "").split("/");
  if (parts.at(-1) === "__init__") parts.pop();
  return parts.length && parts.every((p) => IDENTIFIER.test(p)) ? parts.join(".") : null;
}

const option = (name: string, value: Parameter["value"], category: Parameter["category"], description: string): Parameter => ({
  name,
  value,
  category,
  cli_option: `--${name}`,
  choices: null,
  description,
  required: false,
});

/** The server command for an application in the module at path, as an experiment (title and description from the caller). */
export function webExperiment(path: string, app: WebApp): Omit<Experiment, "title" | "description"> | null {
  const module = moduleOf(path);
  if (!module) return null;
  const target = app.variable === null || (app.framework === "flask" && app.variable === "app") ? module : `${module}:${app.variable}`;
  const command =
    app.framework === "flask"
      ? ["python3", "-m", "flask", "--app", target, "run"]
      : ["python3", "-m", "uvicorn", target.includes(":") ? target : `${target}:app`];
  const parameters =
    app.framework === "flask"
      ? [
          option("host", "127.0.0.1", "string", "The interface to bind to (0.0.0.0 to be reached from outside the pod)"),
          option("port", 5000, "integer", "The port to listen on"),
          option("debug", false, "flag", "Debug mode: the reloader and the in-browser debugger"),
        ]
      : [
          option("host", "127.0.0.1", "string", "The interface to bind to (0.0.0.0 to be reached from outside the pod)"),
          option("port", 8000, "integer", "The port to listen on"),
          option("reload", false, "flag", "Restart when the code changes"),
        ];
  return {
    id: `python-module:${command.slice(2).join(" ")}`,
    entry_point: command.join(" "),
    command,
    language: "python",
    kind: "python-module",
    path,
    inputs: [],
    outputs: [],
    parameters,
  };
}

/** Django's development server, for a manage.py entry. */
export function runserverExperiment(base: Experiment): Experiment {
  const command = [...base.command, "runserver"];
  return {
    ...base,
    id: `${base.id} runserver`,
    title: command.slice(1).join(" "),
    description: "Django's development server",
    entry_point: command.join(" "),
    command,
    parameters: [
      {
        name: "addrport",
        value: "127.0.0.1:8000",
        category: "string",
        cli_option: null,
        choices: null,
        description: "[address:]port to listen on (0.0.0.0:8000 to be reached from outside the pod)",
        required: false,
      },
    ],
  };
}

/**
 * The lines of a Procfile a Python environment runs, as experiments:
 * - `gunicorn <target>`: `python3 -m gunicorn <target>` with its `bind` and
 *   `workers` (as the Procfile gives them, unless they come from the
 *   platform's variables);
 * - `uvicorn <module>:<app>`: `python3 -m uvicorn` with `host` and `port`;
 * - task queue workers (`celery -A tasks worker`, `rq worker`, `dramatiq
 *   tasks`): `python3 -m <tool>` with the line's words;
 * - `python <file>.py ...` and `python -m <module> ...`: the script or module
 *   with the line's arguments.
 * Each only when the module or file it names is in the repository; options
 * holding the platform's variables (`--port $PORT`) are left to their defaults.
 */
export function procfileExperiments(text: string, hasFile: (path: string) => boolean): Experiment[] {
  const out: Experiment[] = [];
  for (const line of readProcfile(text)) {
    const words =
      line.words[0] && /^python[0-9.]*$/.test(line.words[0]) && line.words[1] === "-m" && SERVERS.has(line.words[2] ?? "") ? line.words.slice(2) : line.words;
    const found =
      words[0] === "gunicorn"
        ? gunicornLine(line.process, words.slice(1), hasFile)
        : words[0] === "uvicorn"
          ? uvicornLine(line.process, words.slice(1), hasFile)
          : WORKERS.has(words[0]!)
            ? workerLine(line.process, words, hasFile)
            : /^python[0-9.]*$/.test(words[0]!)
              ? pythonLine(line.process, words.slice(1), hasFile)
              : null;
    if (found && !out.some((e) => e.id === found.id)) out.push(found);
  }
  return out;
}

const SERVERS = new Set(["gunicorn", "uvicorn", "celery", "rq", "dramatiq"]);
const WORKERS = new Set(["celery", "rq", "dramatiq"]);

/** The repository file of a dotted module (`app.main` → app/main.py or app/main/__init__.py), if there. */
function moduleFile(module: string, hasFile: (path: string) => boolean): string | null {
  if (!/^[\w.]+$/.test(module)) return null;
  const base = module.replace(/\./g, "/");
  return [`${base}.py`, `${base}/__init__.py`].find(hasFile) ?? null;
}

/** The value of an option as written (`-w 3`, `--workers=3`), null when absent or set from a variable. */
function optionValue(words: readonly string[], names: readonly string[]): string | null {
  const at = words.findIndex((w) => names.includes(w) || names.some((n) => w.startsWith(`${n}=`)));
  if (at < 0) return null;
  const v = words[at]!.includes("=") ? words[at]!.slice(words[at]!.indexOf("=") + 1) : words[at + 1];
  return v && !holdsVariable(v) ? v : null;
}

function procfileExperiment(process: string, id: string, command: string[], path: string, kind: Experiment["kind"], parameters: Parameter[]): Experiment {
  return {
    id,
    title: command
      .slice(command[1] === "-m" ? 2 : 1)
      .join(" ")
      .slice(0, 512),
    description: `The Procfile's ${process} process`,
    entry_point: command.join(" "),
    command: command.slice(0, 64),
    language: "python",
    kind,
    path,
    inputs: [],
    outputs: [],
    parameters,
  };
}

function gunicornLine(process: string, words: string[], hasFile: (path: string) => boolean): Experiment | null {
  const target = words.find((w, i) => !w.startsWith("-") && (i === 0 || !/^-(b|w|k|c|t)$|^--(bind|workers|worker-class|config|timeout)$/.test(words[i - 1]!)));
  const path = target && /^[\w.]+(:[\w.()]+)?$/.test(target) ? moduleFile(target.split(":")[0]!, hasFile) : null;
  if (!target || !path) return null;
  const workers = Number(optionValue(words, ["-w", "--workers"]));
  const command = ["python3", "-m", "gunicorn", target];
  return procfileExperiment(process, `python-module:gunicorn ${target}`, command, path, "python-module", [
    option(
      "bind",
      optionValue(words, ["-b", "--bind"]) ?? "127.0.0.1:8000",
      "string",
      "The address to listen on (0.0.0.0:8000 to be reached from outside the pod)",
    ),
    option("workers", Number.isSafeInteger(workers) && workers > 0 ? workers : 1, "integer", "Worker processes"),
  ]);
}

function uvicornLine(process: string, words: string[], hasFile: (path: string) => boolean): Experiment | null {
  const target = words.find((w, i) => !w.startsWith("-") && (i === 0 || !/^--(host|port|workers|app-dir|log-level|env-file|root-path)$/.test(words[i - 1]!)));
  const path = target && /^[\w.]+:[\w.]+$/.test(target) ? moduleFile(target.split(":")[0]!, hasFile) : null;
  if (!target || !path) return null;
  const port = Number(optionValue(words, ["--port"]));
  const command = ["python3", "-m", "uvicorn", target];
  return procfileExperiment(process, `python-module:uvicorn ${target}`, command, path, "python-module", [
    option("host", optionValue(words, ["--host"]) ?? "127.0.0.1", "string", "The interface to bind to (0.0.0.0 to be reached from outside the pod)"),
    option("port", Number.isSafeInteger(port) && port > 0 ? port : 8000, "integer", "The port to listen on"),
  ]);
}

/** A task queue's worker: celery's `-A`/`--app` module (or dramatiq's broker module) must be in the repository; rq's worker needs none. */
function workerLine(process: string, words: string[], hasFile: (path: string) => boolean): Experiment | null {
  const rest = withoutPlatformOptions(words.slice(1));
  if (!rest) return null;
  const app = words[0] === "celery" ? optionValue(rest, ["-A", "--app"]) : words[0] === "dramatiq" ? (rest.find((w) => !w.startsWith("-")) ?? null) : null;
  const path = app ? moduleFile(app.split(":")[0]!, hasFile) : words[0] === "rq" ? "Procfile" : null;
  if (!path) return null;
  const command = ["python3", "-m", words[0]!, ...rest];
  return procfileExperiment(process, `python-module:${command.slice(2).join(" ")}`, command, path, "python-module", []);
}

/** `python app/bot.py --once`, `python -m app.worker`: the file or module must be in the repository. */
function pythonLine(process: string, words: string[], hasFile: (path: string) => boolean): Experiment | null {
  const args = withoutPlatformOptions(words.filter((w) => w !== "-u"));
  if (!args?.length) return null;
  if (args[0] === "-m") {
    const module = args[1] ?? "";
    const path = moduleFile(`${module}.__main__`, hasFile) ?? moduleFile(module, hasFile);
    if (!path) return null;
    const command = ["python3", ...args];
    return procfileExperiment(process, `python-module:${args.slice(1).join(" ")}`, command, path, "python-module", []);
  }
  const file = args[0]!.replace(/^\.\//, "");
  if (!/^[\w./-]+\.py$/.test(file) || !hasFile(file)) return null;
  const command = ["python3", file, ...args.slice(1)];
  return procfileExperiment(process, `python:${command.slice(1).join(" ")}`, command, file, "python-script", []);
}
