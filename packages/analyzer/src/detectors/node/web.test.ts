import { beforeAll, describe, expect, it } from "vitest";
import { Syntax } from "../../syntax.ts";
import { memoryContext } from "../../testing/memory-context.ts";
import { detectNode } from "./detector.ts";
import { frameworkPort } from "./web.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

/** The `port` parameter of the `start` script (`node <entry>`), as "VAR=default", or null. */
function portOf(files: Record<string, string>, start = "node server.js"): string | null {
  const out = detectNode(memoryContext({ "package.json": JSON.stringify({ scripts: { start } }), ...files }, { syntax, outOfTime: () => false }));
  const p = out.experiments.find((e) => e.id === "npm:start")?.parameters.find((x) => x.name === "port");
  return p ? `${p.env_var ?? p.cli_option}=${String(p.value)}` : null;
}

describe("the port a Node server listens on", () => {
  it.each<[string, string, string | null]>([
    ["env || number", "const app = express();\nconst PORT = process.env.PORT || 3000;\napp.listen(PORT);\n", "PORT=3000"],
    ["env ?? inline", "app.listen(process.env.PORT ?? 8080, () => console.log('up'));\n", "PORT=8080"],
    ["Number() of env ?? string", "const port = Number(process.env.HTTP_PORT ?? '4000');\nserver.listen(port);\n", "HTTP_PORT=4000"],
    ["parseInt(env, 10) || number", "const port = parseInt(process.env.PORT, 10) || 5000;\napp.listen(port, '0.0.0.0');\n", "PORT=5000"],
    ["unary plus", "const port = +process.env.PORT || 3001;\napp.listen(port);\n", "PORT=3001"],
    ["express-generator's normalizePort", "var port = normalizePort(process.env.PORT || '3000');\napp.set('port', port);\nserver.listen(port);\n", "PORT=3000"],
    ["destructured with a default", "const { PORT = 7000 } = process.env;\napp.listen(PORT);\n", "PORT=7000"],
    ["bracket read, no fallback", 'app.listen(process.env["APP_PORT"]);\n', "APP_PORT=null"],
    ["a config object's port", "const config = { server: { port: process.env.PORT || 9000 } };\napp.listen(config.server.port);\n", "PORT=9000"],
    ["fastify's options object", "await fastify.listen({ port: Number(process.env.PORT) || 3000, host: '0.0.0.0' });\n", "PORT=3000"],
    ["inside a function", "async function main() {\n  const port = process.env.PORT || 3000;\n  app.listen(port);\n}\nmain();\n", "PORT=3000"],
    ["a fixed port is no parameter", "app.listen(3000);\n", null],
    ["no server", "console.log(process.env.PORT || 3000);\n", null],
  ])("%s", (_, source, want) => expect(portOf({ "server.js": source })).toBe(want));

  it("follows the entry's relative imports to the module that listens", () => {
    const files = {
      "src/index.ts": 'import "./server.js";\n',
      "src/server.ts": "import { app } from './app.js';\nconst port = process.env.PORT ?? 8080;\napp.listen(port);\n",
    };
    expect(portOf(files, "tsx src/index.ts")).toBe("PORT=8080");
  });

  it("reads a build's output from its source", () => {
    expect(portOf({ "src/server.ts": "app.listen(process.env.PORT || 3000);\n" }, "node dist/server.js")).toBe("PORT=3000");
  });

  it("keeps a port option the program parses itself", () => {
    const source = "const { program } = require('commander');\nprogram.option('--port <n>', 'port', '4000').parse();\napp.listen(process.env.PORT || 3000);\n";
    expect(portOf({ "server.js": source })).toBe("--port=4000");
  });
});

describe("frameworkPort", () => {
  it.each<[string, string | null]>([
    ["next start", "--port=3000"],
    ["next start -p 8080", "--port=8080"],
    ["NODE_ENV=production next start --port=4100", "--port=4100"],
    ["vite", "--port=5173"],
    ["vite preview", "--port=4173"],
    ["react-scripts start", "PORT=3000"],
    ["vite build", null],
    ["next build && next start", null],
    ["tsc -p .", null],
  ])("%s", (body, want) => {
    const p = frameworkPort(body);
    expect(p ? `${p.env_var ?? p.cli_option}=${String(p.value)}` : null).toBe(want);
  });
});

describe("a Procfile's Node processes", () => {
  const run = (procfile: string, scripts: Record<string, string> = {}) =>
    detectNode(
      memoryContext(
        {
          Procfile: procfile,
          "package.json": JSON.stringify({ scripts }),
          "server.js": "app.listen(process.env.PORT || 3000);\n",
          "jobs/worker.ts": "const { parseArgs } = require('node:util');\nparseArgs({ options: { once: { type: 'boolean', default: false } } });\n",
        },
        { syntax, outOfTime: () => false },
      ),
    )
      .experiments.filter((e) => e.id.startsWith("procfile:"))
      .map((e) => [e.id, e.entry_point, e.language, ...e.parameters.map((p) => p.name)]);
  it.each<[string, string, Record<string, string>, string[][]]>([
    ["a node file, with its parameters", "web: node server.js", {}, [["procfile:web", "node server.js", "javascript", "port"]]],
    ["the platform's options dropped", "web: node server.js --port $PORT", {}, [["procfile:web", "node server.js", "javascript", "port"]]],
    ["Node options kept", "worker: tsx --env-file=.env jobs/worker.ts", {}, [["procfile:worker", "tsx --env-file=.env jobs/worker.ts", "typescript", "once"]]],
    ["what an npm script runs word for word is that script", "web: node server.js", { start: "node  server.js" }, []],
    ["npm scripts, missing files and other languages", "web: npm start\nw: node gone.js\nx: bundle exec puma", {}, []],
  ])("%s", (_, procfile, scripts, want) => expect(run(procfile, scripts)).toEqual(want));
});
