import { ApiException } from "@kubernetes/client-node";
import { DatabaseError } from "pg";
import { describe, expect, it } from "vitest";
import { DomainError, notFound } from "./errors.ts";
import { classifyInfrastructureError } from "./infrastructure-errors.ts";

// The failures seen (or to be expected) under load, built as their libraries
// build them, and the answer each must get: never a 500 (issue 29).

const errno = (code: string, message = code) => Object.assign(new Error(message), { code });
const sqlState = (code: string) => Object.assign(new DatabaseError("postgres says no", 1, "error"), { code });
const kube = (code: number, headers: Record<string, string> = {}) => new ApiException(code, `HTTP-Code: ${code}`, { kind: "Status" }, headers);

const cases: [string, unknown, { kind: "unavailable" | "conflict"; retry?: number; detail: RegExp }][] = [
  // Postgres and its pool
  ["pg pool: no free connection in time", new Error("timeout exceeded when trying to connect"), { kind: "unavailable", retry: 2, detail: /database is busy/ }],
  ["pg: server went away", new Error("Connection terminated unexpectedly"), { kind: "unavailable", retry: 2, detail: /database/ }],
  ["pg: connect timeout", new Error("Connection terminated due to connection timeout"), { kind: "unavailable", retry: 2, detail: /database/ }],
  ["serialization failure", sqlState("40001"), { kind: "unavailable", retry: 1, detail: /concurrent change/ }],
  ["deadlock", sqlState("40P01"), { kind: "unavailable", retry: 1, detail: /concurrent change/ }],
  ["too many connections", sqlState("53300"), { kind: "unavailable", retry: 2, detail: /database is busy/ }],
  ["statement timeout", sqlState("57014"), { kind: "unavailable", retry: 2, detail: /database is busy/ }],
  ["server shutting down", sqlState("57P01"), { kind: "unavailable", retry: 2, detail: /database is busy/ }],
  ["connection failure", sqlState("08006"), { kind: "unavailable", retry: 2, detail: /database is busy/ }],
  ["lock not available", sqlState("55P03"), { kind: "unavailable", retry: 2, detail: /database is busy/ }],
  ["unique violation (a concurrent insert)", sqlState("23505"), { kind: "conflict", detail: /concurrent request/ }],
  ["foreign key violation (a concurrent delete)", sqlState("23503"), { kind: "conflict", detail: /concurrent request/ }],
  // The Kubernetes API server
  ["kube 409 conflict", kube(409), { kind: "conflict", detail: /concurrent change.*Kubernetes/ }],
  ["kube 429 with its Retry-After", kube(429, { "retry-after": "7" }), { kind: "unavailable", retry: 7, detail: /throttling/ }],
  ["kube 429 without one", kube(429), { kind: "unavailable", retry: 5, detail: /throttling/ }],
  ["kube 500", kube(500), { kind: "unavailable", retry: 5, detail: /failed or was unavailable/ }],
  ["kube 503", kube(503), { kind: "unavailable", retry: 5, detail: /failed or was unavailable/ }],
  ["kube 504 (etcd timeout)", kube(504), { kind: "unavailable", retry: 5, detail: /failed or was unavailable/ }],
  ["kube 403 (quota, RBAC)", kube(403), { kind: "unavailable", retry: 5, detail: /refused/ }],
  ["kube 0 (no answer)", kube(0), { kind: "unavailable", retry: 5, detail: /failed or was unavailable/ }],
  // The network, whoever was at the other end
  ["ECONNRESET", errno("ECONNRESET"), { kind: "unavailable", retry: 2, detail: /dropped the connection/ }],
  ["ECONNREFUSED", errno("ECONNREFUSED"), { kind: "unavailable", retry: 2, detail: /did not answer/ }],
  ["ETIMEDOUT", errno("ETIMEDOUT"), { kind: "unavailable", retry: 2, detail: /did not answer/ }],
  ["undici socket", errno("UND_ERR_SOCKET"), { kind: "unavailable", retry: 2, detail: /did not answer/ }],
  ["fetch wrapping ECONNRESET in its cause", new TypeError("fetch failed", { cause: errno("ECONNRESET") }), { kind: "unavailable", detail: /dropped/ }],
  ["a connect to several addresses", new AggregateError([errno("ECONNREFUSED"), errno("ECONNREFUSED")]), { kind: "unavailable", detail: /did not answer/ }],
  ["AbortSignal.timeout", new DOMException("The operation was aborted due to timeout", "TimeoutError"), { kind: "unavailable", retry: 2, detail: /in time/ }],
  // This process's resources (git spawns, mirrors on disk)
  ["spawn EAGAIN", errno("EAGAIN", "spawn git EAGAIN"), { kind: "unavailable", retry: 10, detail: /short of resources/ }],
  ["EMFILE", errno("EMFILE"), { kind: "unavailable", retry: 10, detail: /short of resources/ }],
  ["ENOSPC", errno("ENOSPC"), { kind: "unavailable", retry: 10, detail: /short of resources/ }],
  ["ENOMEM", errno("ENOMEM"), { kind: "unavailable", retry: 10, detail: /short of resources/ }],
];

describe("classifyInfrastructureError", () => {
  it.each(cases)("%s", (_name, err, want) => {
    const got = classifyInfrastructureError(err);
    expect(got).toBeInstanceOf(DomainError);
    expect(got?.kind).toBe(want.kind);
    expect(got?.message).toMatch(want.detail);
    if (want.kind === "unavailable") expect(got?.retryAfterSeconds).toBe(want.retry ?? got?.retryAfterSeconds);
    if (want.kind === "unavailable") expect(got?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    else expect(got?.retryAfterSeconds).toBeUndefined();
    // Nothing of the infrastructure (hosts, SQL, stderr) reaches the client.
    expect(got?.message).not.toMatch(/postgres says no|HTTP-Code|spawn git/);
  });

  it("caps a Kubernetes Retry-After at a minute", () => {
    expect(classifyInfrastructureError(kube(429, { "retry-after": "3600" }))?.retryAfterSeconds).toBe(60);
  });

  it.each([
    ["a bug", new TypeError("Cannot read properties of undefined (reading 'id')")],
    ["a plain Error", new Error("boom")],
    ["a syntax error in SQL (a bug, not load)", sqlState("42601")],
    ["a check violation", sqlState("23514")],
    ["ENOENT (a missing file is no load problem)", errno("ENOENT")],
    ["a domain error (already answered by its kind)", notFound("Run")],
    ["not an object", "boom"],
    ["nothing", undefined],
  ])("leaves %s alone (still a 500, or its own answer)", (_name, err) => {
    expect(classifyInfrastructureError(err)).toBeNull();
  });

  it("stops on a cause cycle", () => {
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(classifyInfrastructureError(a)).toBeNull();
  });
});
