import type { Experiment, Parameter } from "../../model.ts";
import { children, descendants, type Node } from "../../syntax.ts";
import { qualifiedName, type PythonImports } from "./names.ts";

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
 * Servers a Procfile starts (`web: gunicorn app:app --workers 2 --bind
 * 0.0.0.0:$PORT`): `python3 -m gunicorn <target>` with its `bind` and
 * `workers` (as the Procfile gives them, unless they come from the
 * platform's variables), for a target whose module is in the repository.
 */
export function procfileExperiments(text: string, hasFile: (path: string) => boolean): Experiment[] {
  const out: Experiment[] = [];
  for (const line of text.split(/\r?\n/).slice(0, 100)) {
    const m = /^([\w-]+):\s*(?:python[0-9.]*\s+-m\s+)?gunicorn\s+(.{1,1000})$/.exec(line.trim());
    if (!m) continue;
    const words = m[2]!.split(/\s+/);
    const value = (names: string[]) => {
      const at = words.findIndex((w) => names.includes(w) || names.some((n) => w.startsWith(`${n}=`)));
      if (at < 0) return null;
      const v = words[at]!.includes("=") ? words[at]!.slice(words[at]!.indexOf("=") + 1) : words[at + 1];
      return v && !/[$`'"]/.test(v) ? v : null;
    };
    const target = words.find(
      (w, i) => !w.startsWith("-") && (i === 0 || !/^-(b|w|k|c|t)$|^--(bind|workers|worker-class|config|timeout)$/.test(words[i - 1]!)),
    );
    const module = target && /^[\w.]+(:[\w.()]+)?$/.test(target) ? target.split(":")[0]! : null;
    const path = module && [`${module.replace(/\./g, "/")}.py`, `${module.replace(/\./g, "/")}/__init__.py`].find(hasFile);
    if (!target || !path) continue;
    const workers = Number(value(["-w", "--workers"]));
    const command = ["python3", "-m", "gunicorn", target];
    out.push({
      id: `python-module:gunicorn ${target}`,
      title: `gunicorn ${target}`,
      description: `The Procfile's ${m[1]} process`,
      entry_point: command.join(" "),
      command,
      language: "python",
      kind: "python-module",
      path,
      inputs: [],
      outputs: [],
      parameters: [
        option("bind", value(["-b", "--bind"]) ?? "127.0.0.1:8000", "string", "The address to listen on (0.0.0.0:8000 to be reached from outside the pod)"),
        option("workers", Number.isSafeInteger(workers) && workers > 0 ? workers : 1, "integer", "Worker processes"),
      ],
    });
  }
  return out;
}
