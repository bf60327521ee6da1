import { describe, expect, it } from "vitest";
import { memoryContext, type MemoryFile } from "../testing/memory-context.ts";
import { DEVCONTAINER_MAX_BYTES, parseJsonc, resolveDevcontainer } from "./devcontainer.ts";
import { resolveEnvironment } from "./index.ts";

const devcontainer = (files: Record<string, string | null | MemoryFile>) => resolveDevcontainer(memoryContext(files));

describe("parseJsonc", () => {
  it.each<[string, string, unknown]>([
    ["plain JSON", '{"image": "python:3.12"}', { image: "python:3.12" }],
    ["line comments", '// the dev image\n{\n  "image": "python:3.12" // pinned\n}', { image: "python:3.12" }],
    ["block comments", '/* a\n * header */ {"image": /* inline */ "python:3.12"}', { image: "python:3.12" }],
    ["trailing commas in objects and arrays", '{"a": [1, 2,], "b": {"c": 1,},}', { a: [1, 2], b: { c: 1 } }],
    ["a trailing comma before a comment", '{"a": 1, // last\n}', { a: 1 }],
    [
      "comment markers inside strings",
      '{"u": "https://x.io/a//b", "g": "/* not a comment */", "q": "say \\"//\\""}',
      {
        u: "https://x.io/a//b",
        g: "/* not a comment */",
        q: 'say "//"',
      },
    ],
    ["a comma inside a string before a brace", '{"s": ",}"}', { s: ",}" }],
    ["a byte-order mark", '\uFEFF{"image": "x"}', { image: "x" }],
    ["CRLF line endings", '{\r\n  // c\r\n  "image": "x",\r\n}\r\n', { image: "x" }],
  ])("reads %s", (_what, text, want) => expect(parseJsonc(text)).toEqual(want));

  it.each([
    ["an unclosed block comment", '{"image": "x"} /* oops'],
    ["two commas", '{"a": [1,,]}'],
    ["single quotes", "{'image': 'x'}"],
    ["an unclosed object", '{"image": "x"'],
    ["nothing", ""],
  ])("refuses %s", (_what, text) => expect(() => parseJsonc(text)).toThrow(SyntaxError));
});

describe("resolveDevcontainer", () => {
  it.each<[string, Record<string, string | null | MemoryFile>, { image: string; path: string } | null, RegExp[]]>([
    ["no configuration", { "README.md": "# x" }, null, []],
    [
      "the root .devcontainer/devcontainer.json, with comments and trailing commas",
      { ".devcontainer/devcontainer.json": '{\n  // dev image\n  "name": "x",\n  "image": "ghcr.io/acme/dev:1.4",\n}\n' },
      { image: "ghcr.io/acme/dev:1.4", path: ".devcontainer/devcontainer.json" },
      [],
    ],
    [".devcontainer.json at the root", { ".devcontainer.json": '{"image": "python:3.12"}' }, { image: "python:3.12", path: ".devcontainer.json" }, []],
    [
      "several: .devcontainer/devcontainer.json first, the others named",
      {
        ".devcontainer.json": '{"image": "b:1"}',
        ".devcontainer/devcontainer.json": '{"image": "a:1"}',
        ".devcontainer/gpu/devcontainer.json": '{"image": "c:1"}',
      },
      { image: "a:1", path: ".devcontainer/devcontainer.json" },
      [/3 dev container configurations: \.devcontainer\/devcontainer\.json is used .*not used: \.devcontainer\.json, \.devcontainer\/gpu\/devcontainer\.json/],
    ],
    [
      "named ones only: the first by name",
      { ".devcontainer/python/devcontainer.json": '{"image": "p:1"}', ".devcontainer/node/devcontainer.json": '{"image": "n:1"}' },
      { image: "n:1", path: ".devcontainer/node/devcontainer.json" },
      [/2 dev container configurations: \.devcontainer\/node\/devcontainer\.json is used/],
    ],
    ["deeper folders are not configurations", { ".devcontainer/a/b/devcontainer.json": '{"image": "x:1"}' }, null, []],
    [
      "malformed: a note, never a failure",
      { ".devcontainer/devcontainer.json": '{"image": "x:1" "name": "y"}' },
      null,
      [/\.devcontainer\/devcontainer\.json is not valid JSON \(comments and trailing commas allowed\): .*its image is not used/],
    ],
    ["not an object", { ".devcontainer.json": '["x:1"]' }, null, [/is not a JSON object/]],
    [
      "huge: not read",
      { ".devcontainer/devcontainer.json": { text: '{"image": "x:1"}', size: DEVCONTAINER_MAX_BYTES + 1 } },
      null,
      [/too large to read \(262145 bytes, at most 262144\)/],
    ],
    ["unreadable (binary)", { ".devcontainer/devcontainer.json": null }, null, [/could not be read/]],
    [
      "a Dockerfile build: codeplane builds no images",
      { ".devcontainer/devcontainer.json": '{"build": {"dockerfile": "Dockerfile"}, "image": "ignored:1"}' },
      null,
      [/builds its image from a Dockerfile \(build\): codeplane does not build images/],
    ],
    ["the old dockerFile field", { ".devcontainer/devcontainer.json": '{"dockerFile": "Dockerfile"}' }, null, [/codeplane does not build images/]],
    [
      "Docker Compose",
      { ".devcontainer/devcontainer.json": '{"dockerComposeFile": "compose.yml", "service": "app", "image": "x:1"}' },
      null,
      [/runs Docker Compose services \(dockerComposeFile\)/],
    ],
    ["an image that is not a string", { ".devcontainer.json": '{"image": 3}' }, null, [/image is not a non-empty string/]],
    ["a variable in the image", { ".devcontainer.json": '{"image": "ghcr.io/acme/${localEnv:TAG}"}' }, null, [/uses a variable/]],
    ["spaces in the image", { ".devcontainer.json": '{"image": "x:1 --privileged"}' }, null, [/not an image reference/]],
    [
      "no image at all (features only)",
      { ".devcontainer.json": '{"features": {"ghcr.io/devcontainers/features/node:1": {}}}' },
      null,
      [/features \(ghcr\.io\/devcontainers\/features\/node:1\) are not installed/],
    ],
    [
      "containerEnv, remoteEnv and lifecycle commands: notes, never applied",
      {
        ".devcontainer/devcontainer.json":
          '{"image": "x:1", "containerEnv": {"DATA_DIR": "/data", "TOKEN": "${localEnv:TOKEN}"}, "remoteEnv": {"A": "1"}, "postCreateCommand": "pip install -e ."}',
      },
      { image: "x:1", path: ".devcontainer/devcontainer.json" },
      [
        /containerEnv \(DATA_DIR, TOKEN\) is not applied to runs; set what a run needs as environment variables/,
        /remoteEnv \(A\) is not applied/,
        /postCreateCommand is not run/,
      ],
    ],
  ])("%s", (_what, files, declared, notes) => {
    const got = devcontainer(files);
    expect(got.declared).toEqual(declared);
    expect(got.notes).toHaveLength(notes.length);
    notes.forEach((n, i) => expect(got.notes[i]).toMatch(n));
  });

  it("is part of the environment: declared_image only when an image is declared, its notes with the others", () => {
    const ctx = memoryContext({ ".devcontainer/devcontainer.json": '{"image": "python:3.12", "features": {"f": {}}}', "requirements.txt": "x\n" });
    const env = resolveEnvironment({ ctx, experiments: [] });
    expect(env.declared_image).toEqual({ image: "python:3.12", path: ".devcontainer/devcontainer.json" });
    expect(env.notes).toEqual([expect.stringMatching(/features \(f\) are not installed/)]);
    // The configuration is not a manifest: editing its editor settings makes no new environment (the key covers the image itself).
    expect(env.manifests.map((m) => m.path)).toEqual(["requirements.txt"]);
    expect("declared_image" in resolveEnvironment({ ctx: memoryContext({ "requirements.txt": "x\n" }), experiments: [] })).toBe(false);
  });
});
