import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PooledKubeConfig } from "./pooled-kube-config.ts";

// Against a real TLS server on loopback, counting handshakes: the pooled
// config's API calls share one connection; the library's own opens one each.

let server: Server;
let url: string;
let ca: string;
let handshakes = 0;
const dir = mkdtempSync(path.join(tmpdir(), "codeplane-kc-"));

beforeAll(async () => {
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      `${dir}/key.pem`,
      "-out",
      `${dir}/cert.pem`,
    ],
    { stdio: "ignore" },
  );
  ca = readFileSync(`${dir}/cert.pem`, "utf8");
  server = createServer({ key: readFileSync(`${dir}/key.pem`), cert: ca }, (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ kind: "NamespaceList", apiVersion: "v1", metadata: {}, items: [] }));
  });
  server.on("secureConnection", () => handshakes++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

function load<T extends KubeConfig>(kc: T): T {
  kc.loadFromOptions({
    clusters: [{ name: "local", server: url, caData: Buffer.from(ca).toString("base64") }],
    users: [{ name: "me", token: "t" }],
    contexts: [{ name: "local", cluster: "local", user: "me" }],
    currentContext: "local",
  });
  return kc;
}

async function handshakesFor(kc: KubeConfig, calls: number): Promise<number> {
  const before = handshakes;
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < calls; i++) expect((await core.listNamespace()).items).toEqual([]);
  return handshakes - before;
}

describe("PooledKubeConfig", () => {
  // undici may open a second connection while the first is being handed back: "at most 2", never one per call.
  it("makes API calls over kept-alive TLS connections", async () => {
    expect(await handshakesFor(load(new PooledKubeConfig()), 20)).toBeLessThanOrEqual(2);
  });

  it("is needed: the library's own config handshakes for every call", async () => {
    expect(await handshakesFor(load(new KubeConfig()), 20)).toBe(20);
  });

  it("starts a new pool after its time, so rotated certificates are read again", async () => {
    let now = 0;
    const kc = load(new PooledKubeConfig(() => now));
    expect(await handshakesFor(kc, 10)).toBeLessThanOrEqual(2);
    now += 11 * 60_000;
    const after = await handshakesFor(kc, 10);
    expect(after).toBeGreaterThanOrEqual(1);
    expect(after).toBeLessThanOrEqual(2);
  });
});
