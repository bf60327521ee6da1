import { describe, expect, it } from "vitest";
import { moduleOf, procfileExperiments } from "./web.ts";

describe("moduleOf", () => {
  it.each<[string, string | null]>([
    ["app.py", "app"],
    ["web/app.py", "web.app"],
    ["shop/__init__.py", "shop"],
    ["my-site/app.py", null],
    ["2fa/app.py", null],
  ])("%s", (path, module) => expect(moduleOf(path)).toBe(module));
});

describe("procfileExperiments", () => {
  const files = new Set(["web/app.py", "svc/__init__.py"]);
  const read = (text: string) =>
    procfileExperiments(text, (p) => files.has(p)).map((e) => [e.id, e.path, ...e.parameters.map((p) => `${p.name}=${String(p.value)}`)]);
  it.each<[string, string, string[][]]>([
    [
      "bind and workers as written",
      "web: gunicorn web.app:app -w 3 --bind 127.0.0.1:9000",
      [["python-module:gunicorn web.app:app", "web/app.py", "bind=127.0.0.1:9000", "workers=3"]],
    ],
    [
      "the platform's port left to the default",
      "web: gunicorn web.app:app --bind 0.0.0.0:$PORT",
      [["python-module:gunicorn web.app:app", "web/app.py", "bind=127.0.0.1:8000", "workers=1"]],
    ],
    [
      "options before the target, = forms, python -m",
      "web: python -m gunicorn --workers=4 -b :8080 svc:create_app()",
      [["python-module:gunicorn svc:create_app()", "svc/__init__.py", "bind=:8080", "workers=4"]],
    ],
    ["a module not in the repository", "web: gunicorn other:app", []],
    ["not gunicorn", "worker: celery -A tasks worker\nrelease: python manage.py migrate", []],
  ])("%s", (_, text, want) => expect(read(text)).toEqual(want));
});
