import { describe, expect, it } from "vitest";
import { mergeEnvUses, providedByLauncher } from "./env-rules.ts";

const use = (name: string, path: string, line: number, required: boolean) => ({ name, path, line, required });

describe("mergeEnvUses", () => {
  it.each([
    ["one required code read", [use("T", "a.py", 3, true)], ["T"], [use("T", "a.py", 3, true)]],
    ["the first required read wins the location", [use("T", "a.py", 3, false), use("T", "b.py", 1, true)], ["T"], [use("T", "b.py", 1, true)]],
    ["no required read: the first one", [use("T", "a.py", 3, false), use("T", "b.py", 1, false)], [], [use("T", "a.py", 3, false)]],
    ["required only when an experiment requires it", [use("T", "lib/a.py", 3, true)], [], [use("T", "lib/a.py", 3, false)]],
    ["a template never makes a variable required", [use("T", ".env.example", 2, true)], [], [use("T", ".env.example", 2, false)]],
    ["a template's value is no default", [use("T", ".env.example", 2, false), use("T", "a.py", 3, true)], ["T"], [use("T", "a.py", 3, true)]],
  ])("%s", (_name, uses, required, want) => expect(mergeEnvUses(uses, new Set(required))).toEqual(want));
});

describe("providedByLauncher", () => {
  it.each([
    ["RANK", true],
    ["WORLD_SIZE", true],
    ["SLURM_JOB_ID", true],
    ["HOME", true],
    ["OPENAI_API_KEY", false],
    ["RANKING_URL", false],
  ])("%s: %s", (name, provided) => expect(providedByLauncher(name)).toBe(provided));
});
