import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SecretBox } from "./secret-box.ts";

const k1 = randomBytes(32);
const k2 = randomBytes(32);

describe("SecretBox", () => {
  it("round-trips and never contains the plaintext", () => {
    const box = new SecretBox({ currentId: "k1", keys: { k1 } });
    const sealed = box.seal("hunter2-very-secret", "row-1");
    expect(sealed.keyId).toBe("k1");
    expect(sealed.data.includes(Buffer.from("hunter2"))).toBe(false);
    expect(box.open(sealed, "row-1")).toBe("hunter2-very-secret");
  });

  it("uses a fresh nonce each time", () => {
    const box = new SecretBox({ currentId: "k1", keys: { k1 } });
    expect(box.seal("same", "a").data.equals(box.seal("same", "a").data)).toBe(false);
  });

  it.each([
    ["another row's associated data", (b: Buffer) => b, "row-2"],
    ["a flipped ciphertext bit", (b: Buffer) => Buffer.concat([b.subarray(0, 14), Buffer.from([b[14]! ^ 1]), b.subarray(15)]), "row-1"],
    ["a truncated value", (b: Buffer) => b.subarray(0, 20), "row-1"],
  ])("refuses %s", (_name, mangle, aad) => {
    const box = new SecretBox({ currentId: "k1", keys: { k1 } });
    const sealed = box.seal("value", "row-1");
    expect(() => box.open({ keyId: "k1", data: mangle(sealed.data) }, aad)).toThrow();
  });

  it("decrypts with an old key after rotation and seals with the new one", () => {
    const old = new SecretBox({ currentId: "k1", keys: { k1 } });
    const sealed = old.seal("rotate me", "row");
    const rotated = new SecretBox({ currentId: "k2", keys: { k1, k2 } });
    expect(rotated.open(sealed, "row")).toBe("rotate me");
    expect(rotated.seal("x", "row").keyId).toBe("k2");
    const withoutOld = new SecretBox({ currentId: "k2", keys: { k2 } });
    expect(() => withoutOld.open(sealed, "row")).toThrow(/k1/);
  });
});
