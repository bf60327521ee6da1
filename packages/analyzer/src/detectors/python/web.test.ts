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
  const files = new Set(["web/app.py", "svc/__init__.py", "jobs/tasks.py", "bots/clock.py", "manage.py"]);
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
      "web: python -m gunicorn --workers=4 -b :8080 'svc:create_app()'",
      [["python-module:gunicorn svc:create_app()", "svc/__init__.py", "bind=:8080", "workers=4"]],
    ],
    ["a module not in the repository", "web: gunicorn other:app", []],
    ["modules not in the repository", "worker: celery -A tasks worker\nrelease: python admin.py migrate", []],
    [
      "uvicorn with the platform's port left to the default",
      "web: uvicorn web.app:api --host 0.0.0.0 --port $PORT",
      [["python-module:uvicorn web.app:api", "web/app.py", "host=0.0.0.0", "port=8000"]],
    ],
    [
      "uvicorn with a port written out",
      "web: python -m uvicorn --port 9000 web.app:api",
      [["python-module:uvicorn web.app:api", "web/app.py", "host=127.0.0.1", "port=9000"]],
    ],
    [
      "a celery worker of a module in the repository",
      "worker: celery -A jobs.tasks worker --loglevel=info --concurrency $WEB_CONCURRENCY",
      [["python-module:celery -A jobs.tasks worker --loglevel=info", "jobs/tasks.py"]],
    ],
    ["an rq worker", "worker: rq worker high default", [["python-module:rq worker high default", "Procfile"]]],
    [
      "python scripts and modules with their arguments",
      "clock: python -u bots/clock.py --every 60\nrelease: python manage.py migrate --noinput\nsync: python -m svc --once",
      [
        ["python:bots/clock.py --every 60", "bots/clock.py"],
        ["python:manage.py migrate --noinput", "manage.py"],
        ["python-module:svc --once", "svc/__init__.py"],
      ],
    ],
    ["a positional from a variable is not runnable", "worker: python manage.py rqworker $QUEUE", []],
    ["shell syntax is left alone", "web: cd web && gunicorn app:app\nrelease: python manage.py migrate; python manage.py seed", []],
    ["not Python", "web: node server.js\nweb2: bundle exec puma -C config/puma.rb", []],
  ])("%s", (_, text, want) => expect(read(text)).toEqual(want));
});
