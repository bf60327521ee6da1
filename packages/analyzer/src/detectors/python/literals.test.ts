import { beforeAll, describe, expect, it } from "vitest";
import { Syntax } from "../../syntax.ts";
import { literal, type Literal } from "./literals.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

const read = (src: string): Literal | null =>
  syntax.parse("python", `v = ${src}\n`, (root) => literal(root.firstNamedChild?.firstNamedChild?.childForFieldName("right")))?.value ?? null;

describe("python: constant expressions", () => {
  it.each<[string, Literal["kind"] | null, unknown]>([
    ["5 * 8000", "int", 40000],
    ["2**19", "int", 524288],
    ["10**8", "int", 100_000_000],
    ["2 ** -1", "float", 0.5],
    ["6e-4 / 10", "float", 6e-4 / 10],
    ["7 / 7", "float", 1],
    ["7 // 2", "int", 3],
    ["-7 // 2", "int", -4],
    ["-7 % 3", "int", 2],
    ["1 << 20", "int", 1048576],
    ["64 * 1024 * 1024", "int", 67108864],
    ["(3 + 1) * 2", "int", 8],
    ["1.5 * 2", "float", 3],
    ["-(2 ** 3)", "int", -8],
    ["'out' + '/' + 'runs'", "str", "out/runs"],
    ["1 / 0", null, null],
    ["5 % 0", null, null],
    ["2 ** 4096", null, null],
    ["2 ** 60", null, null],
    ["'a' * 3", null, null],
    ["'a' + 1", null, null],
    ["x * 2", null, null],
    ["KB * 4", null, null],
    ["1 << -1", null, null],
  ])("%s", (src, kind, value) => {
    const lit = read(src);
    if (kind === null) expect(lit).toBeNull();
    else expect(lit).toEqual({ kind, value });
  });

  it.each<[string, unknown, string]>([
    ['"bfloat16" if torch.cuda.is_bf16_supported() else "float16"', "bfloat16", '"bfloat16" if torch.cuda.is_bf16_supported(), else "float16"'],
    ['detect() if auto else "cpu"', "cpu", 'detect() if auto, else "cpu"'],
    ["4 if big else 2", 4, "4 if big, else 2"],
  ])("a conditional gives its first constant branch, with a note: %s", (src, value, note) => {
    expect(read(src)).toMatchObject({ value, note });
  });

  it("gives up on a conditional with no constant branch, and on arithmetic over a conditional", () => {
    expect(read("a if c else b")).toBeNull();
    expect(read("(2 if c else 4) * 8")).toBeNull();
  });

  it("stops at a depth a real default never reaches", () => {
    expect(read(Array.from({ length: 100 }, () => "1").join(" + "))).toBeNull();
    expect(read(Array.from({ length: 20 }, () => "1").join(" + "))).toEqual({ kind: "int", value: 20 });
  });
});
