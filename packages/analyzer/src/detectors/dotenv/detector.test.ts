import { describe, expect, it } from "vitest";
import { detectDotenv, isPlaceholder, templateKeys } from "./detector.ts";
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

describe("isPlaceholder", () => {
  it.each([
    ["", true],
    ["  ", true],
    ["...", true],
    ["sk_test_...", true],
    ["<your token>", true],
    ["your-api-key", true],
    ["your_openai_key_here", true],
    ["changeme", true],
    ["CHANGE_ME", true],
    ["xxxx", true],
    ["${SECRET}", true],
    ["replace-with-your-dsn", true],
    ["false", false],
    ["8080", false],
    ["redis://localhost:6379/0", false],
    ["postgres://app:app@localhost:5432/app", false],
    ["info", false],
    ["https://api.example.com", false],
    ["gpt-4o-mini", false],
  ])("%j is a placeholder: %s", (value, placeholder) => expect(isPlaceholder(value)).toBe(placeholder));
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
        { name: "API_KEY", path: ".env.example", line: 1, required: true },
        // A value in the template is the default the project suggests: not something the user must set.
        { name: "A", path: "a/.env.dist", line: 1, required: false },
        { name: "B", path: "b/example.env", line: 1, required: false },
        { name: "C", path: "c/env.example", line: 1, required: false },
        { name: "PORT", path: "services/api/.env.sample", line: 1, required: false },
        { name: "NEXT_PUBLIC_URL", path: "web/.env.template", line: 1, required: true },
      ],
    });
  });

  it("stops when out of time", () => {
    expect(detectDotenv(context({ ".env.example": "A=1\n" }, () => true)).envVars).toEqual([]);
  });
});
