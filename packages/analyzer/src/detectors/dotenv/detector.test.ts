import { describe, expect, it } from "vitest";
import { composeEnv, detectDotenv, prismaEnv, templateKeys } from "./detector.ts";
import { memoryContext } from "../../testing/memory-context.ts";

const context = (files: Record<string, string | null>, outOfTime = () => false) =>
  memoryContext(files, {
    outOfTime,
    onRead: (path) => {
      if (path.endsWith("/.env") || path === ".env") throw new Error("the real .env must never be read");
    },
  });

describe("templateKeys", () => {
  it.each<[string, string, { name: string; line: number }[]]>([
    [
      "plain keys",
      "A=1\nB=\n",
      [
        { name: "A", line: 1 },
        { name: "B", line: 2 },
      ],
    ],
    ["comments and blanks", "# Database\n\n  # DB_OLD=x\nDB_URL=postgres://localhost/db # local\n", [{ name: "DB_URL", line: 4 }]],
    [
      "export and spaces around =",
      "export TOKEN=abc\nKEY = value\n",
      [
        { name: "TOKEN", line: 1 },
        { name: "KEY", line: 2 },
      ],
    ],
    [
      "multi-line quoted values",
      'CERT="-----BEGIN\nNOT_A_KEY=1\n-----END"\nAFTER=1\nONE="done"\n',
      [
        { name: "CERT", line: 1 },
        { name: "AFTER", line: 4 },
        { name: "ONE", line: 5 },
      ],
    ],
    [
      "escaped quotes do not close",
      'MSG="say \\"hi\\"\nSTILL=inside"\nNEXT=1\n',
      [
        { name: "MSG", line: 1 },
        { name: "NEXT", line: 3 },
      ],
    ],
    ["duplicates keep the first line", "A=1\nA=2\n", [{ name: "A", line: 1 }]],
    ["not keys", "1BAD=x\nno equals\n-X=1\n", []],
    [
      "CRLF",
      "A=1\r\nB=2\r\n",
      [
        { name: "A", line: 1 },
        { name: "B", line: 2 },
      ],
    ],
  ])("%s", (_, text, keys) => expect(templateKeys(text).map(({ name, line }) => ({ name, line }))).toEqual(keys));

  it("gives each key its value, unquoted and without a trailing comment", () => {
    expect(templateKeys("A=1 # one\nB=\"x # y\"\nC=\nD='q'\n").map((k) => k.value)).toEqual(["1", "x # y", "", "q"]);
  });
});

describe("detectDotenv", () => {
  it("reads every template name at any depth and never the real .env", () => {
    const out = detectDotenv(
      context({
        ".env": "SECRET=hunter2\n",
        ".env.example": "API_KEY=\n",
        "services/api/.env.sample": "PORT=8080\n",
        "web/.env.template": "NEXT_PUBLIC_URL=\n",
        "a/.env.dist": "A=1\n",
        "b/example.env": "B=1\n",
        "c/env.example": "C=1\n",
        "d/.env.local": "D=1\n",
        "e/.env.example": null,
      }),
    );
    expect(out).toEqual({
      experiments: [],
      envVars: [
        // Documentation: nothing loads a template, so none of its keys is required by it, empty or not.
        { name: "API_KEY", path: ".env.example", line: 1, required: false },
        { name: "A", path: "a/.env.dist", line: 1, required: false },
        { name: "B", path: "b/example.env", line: 1, required: false },
        { name: "C", path: "c/env.example", line: 1, required: false },
        { name: "PORT", path: "services/api/.env.sample", line: 1, required: false },
        { name: "NEXT_PUBLIC_URL", path: "web/.env.template", line: 1, required: false },
      ],
    });
  });

  it("reads Prisma schemas and compose files", () => {
    const out = detectDotenv(
      context({
        "prisma/schema.prisma": 'datasource db {\n  provider = "postgresql"\n  url = env("DATABASE_URL")\n  // shadowDatabaseUrl = env("SHADOW_URL")\n}\n',
        "docker-compose.yml": "services:\n  db:\n    environment:\n      PASSWORD: ${PG_PASSWORD:?set it}\n",
        "deploy/compose.prod.yaml": "x: ${TAG}\n",
        "notes.yml": "y: ${NOT_COMPOSE:?}\n",
      }),
    );
    expect(out.envVars).toEqual([
      { name: "TAG", path: "deploy/compose.prod.yaml", line: 1, required: false },
      { name: "PG_PASSWORD", path: "docker-compose.yml", line: 4, required: true },
      { name: "DATABASE_URL", path: "prisma/schema.prisma", line: 3, required: true },
    ]);
  });

  it.each([
    ["${A:?msg}", [{ name: "A", line: 1, required: true }]],
    ["${A?}", [{ name: "A", line: 1, required: true }]],
    ["${A}", [{ name: "A", line: 1, required: false }]],
    [
      "${A:-x} ${B-y} ${C:+z}",
      [
        { name: "A", line: 1, required: false },
        { name: "B", line: 1, required: false },
        { name: "C", line: 1, required: false },
      ],
    ],
    ["$${ESCAPED:?}", []],
    ["# ${COMMENTED:?}", []],
  ])("compose %s", (text, want) => expect(composeEnv(text)).toEqual(want));

  it("Prisma env() outside comments", () => {
    expect(prismaEnv('url = env("A") // env("B")\ndirectUrl = env( "C" )\n')).toEqual([
      { name: "A", line: 1, required: true },
      { name: "C", line: 2, required: true },
    ]);
  });

  it("stops when out of time", () => {
    expect(detectDotenv(context({ ".env.example": "A=1\n" }, () => true)).envVars).toEqual([]);
  });
});
