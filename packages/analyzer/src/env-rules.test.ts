import { describe, expect, it } from "vitest";
import { mergeEnvUses, providedByLauncher } from "./env-rules.ts";

const use = (name: string, path: string, line: number, required: boolean) => ({ name, path, line, required });

describe("mergeEnvUses", () => {
  it.each([
    ["one required code read", [use("T", "a.py", 3, true)], [use("T", "a.py", 3, true)]],
    ["the first required read wins the location", [use("T", "a.py", 3, false), use("T", "b.py", 1, true)], [use("T", "b.py", 1, true)]],
    ["no required read: the first one", [use("T", "a.py", 3, false), use("T", "b.py", 1, false)], [use("T", "a.py", 3, false)]],
    ["a template placeholder alone", [use("T", ".env.example", 2, true)], [use("T", ".env.example", 2, true)]],
    ["a template value is a default", [use("T", "a.py", 3, true), use("T", ".env.example", 2, false)], [use("T", "a.py", 3, false)]],
    ["the code's default beats a template placeholder", [use("T", "a.py", 3, false), use("T", ".env.example", 2, true)], [use("T", "a.py", 3, false)]],
    ["a template placeholder with a required code read", [use("T", "a.py", 3, true), use("T", "x/.env.sample", 2, true)], [use("T", "a.py", 3, true)]],
    ["a launcher's variable", [use("LOCAL_RANK", "train.py", 9, true)], [use("LOCAL_RANK", "train.py", 9, false)]],
  ])("%s", (_name, uses, want) => expect(mergeEnvUses(uses)).toEqual(want));
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
