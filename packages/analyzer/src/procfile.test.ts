import { describe, expect, it } from "vitest";
import { readProcfile, withoutPlatformOptions } from "./procfile.ts";

describe("readProcfile", () => {
  it.each<[string, string, [string, string[]][]]>([
    [
      "process names and words",
      "web: node server.js\nworker:   celery -A t worker",
      [
        ["web", ["node", "server.js"]],
        ["worker", ["celery", "-A", "t", "worker"]],
      ],
    ],
    [
      "exec and assignments before the command",
      "web: exec env-free NODE_ENV=production node app.js",
      [["web", ["env-free", "NODE_ENV=production", "node", "app.js"]]],
    ],
    ["leading assignments", "web: NODE_ENV=production exec node app.js", [["web", ["node", "app.js"]]]],
    ["a word quoted whole", `web: gunicorn 'app:create_app()' -b "0.0.0.0:8000"`, [["web", ["gunicorn", "app:create_app()", "-b", "0.0.0.0:8000"]]]],
    ["shell syntax", 'release: ./migrate && ./seed\nweb: node a.js | tee log\nx: echo $(date)\ny: echo "$HOME"', []],
    ["comments, blanks and junk", "# web: node a.js\n\nnot a line\n", []],
    ["CRLF", "web: node a.js\r\n", [["web", ["node", "a.js"]]]],
  ])("%s", (_, text, want) => expect(readProcfile(text).map((l) => [l.process, l.words])).toEqual(want));
});

describe("withoutPlatformOptions", () => {
  it.each<[string, string | null]>([
    ["app:app --bind 0.0.0.0:$PORT --workers 2", "app:app --workers 2"],
    ["--port=${PORT} main:app", "main:app"],
    ["-p $PORT x.js", "x.js"],
    ["worker $QUEUE", null],
    ["a b c", "a b c"],
  ])("%s", (words, want) => expect(withoutPlatformOptions(words.split(" "))?.join(" ") ?? null).toBe(want));
});
