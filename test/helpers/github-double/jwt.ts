import { type KeyObject, verify } from "node:crypto";

// GitHub App JSON web tokens, checked the way GitHub checks them: RS256 only,
// signed with the App's key, `iss` the App's id (or client id), issued in the
// past (a minute of clock drift allowed) and expiring in the future but no
// more than ten minutes from now. The messages are GitHub's, so clients that
// recognise them (Octokit's clock-skew retry) react as they would there.

export type JwtResult = { ok: true; iss: string } | { ok: false; message: string };

const DECODE = "A JSON web token could not be decoded";

function part(s: string): any {
  return JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
}

export function verifyAppJwt(token: string, key: KeyObject, accepted: string[], nowSeconds = Math.floor(Date.now() / 1000)): JwtResult {
  const pieces = token.split(".");
  if (pieces.length !== 3) return { ok: false, message: DECODE };
  const [h, p, s] = pieces as [string, string, string];
  let header: any;
  let payload: any;
  try {
    header = part(h);
    payload = part(p);
  } catch {
    return { ok: false, message: DECODE };
  }
  if (header?.alg !== "RS256") return { ok: false, message: DECODE };
  const good = verify("RSA-SHA256", Buffer.from(`${h}.${p}`), key, Buffer.from(s, "base64url"));
  if (!good) return { ok: false, message: DECODE };
  if (typeof payload !== "object" || payload === null) return { ok: false, message: DECODE };
  const { iat, exp, iss } = payload;
  if (typeof iat !== "number" || !Number.isInteger(iat) || iat > nowSeconds + 60) {
    return { ok: false, message: "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued" };
  }
  if (typeof exp !== "number" || exp <= nowSeconds) {
    return { ok: false, message: "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires" };
  }
  if (exp > nowSeconds + 600 || exp - iat > 660) {
    return { ok: false, message: "'Expiration time' claim ('exp') is too far in the future" };
  }
  if (!accepted.includes(String(iss))) return { ok: false, message: "Integration not found" };
  return { ok: true, iss: String(iss) };
}
