import { createHash } from "node:crypto";
import type { AnalyzerContext } from "../detector.ts";
import type { RepoFile } from "../files.ts";
import type { Syntax } from "../syntax.ts";

// An AnalyzerContext over files held in memory, for the detectors' and the
// summary's unit tests: the same rules as the real walk (sorted paths, no
// symlinks), without a disk.

export interface MemoryFile {
  /** null stands for a file that cannot be read (binary, too large). */
  text: string | null;
  size?: number;
  executable?: boolean;
}

export interface MemoryContextOptions {
  /** Detectors that parse need one; pure text readers (summary, Makefiles) do not. */
  syntax?: Syntax;
  outOfTime?: () => boolean;
  /** Called on every read, before it is answered (to forbid or count reads). */
  onRead?: (path: string) => void;
}

export function memoryContext(files: Record<string, string | null | MemoryFile>, options: MemoryContextOptions = {}): AnalyzerContext {
  const get = (path: string): MemoryFile | undefined => {
    const f = files[path];
    return f === undefined ? undefined : f === null || typeof f === "string" ? { text: f } : f;
  };
  const list: RepoFile[] = Object.keys(files)
    .sort()
    .map((path) => {
      const f = get(path)!;
      return { path, size: f.size ?? (f.text === null ? 10 : Buffer.byteLength(f.text)), executable: f.executable ?? false };
    });
  return {
    files: list,
    byPath: new Map(list.map((f) => [f.path, f])),
    readText: (path) => {
      options.onRead?.(path);
      return get(path)?.text ?? null;
    },
    sha256: (path) => {
      const text = get(path)?.text;
      return text === undefined || text === null ? null : createHash("sha256").update(text).digest("hex");
    },
    syntax:
      options.syntax ??
      (new Proxy(
        {},
        {
          get: () => {
            throw new Error("this context has no parser");
          },
        },
      ) as Syntax),
    outOfTime: options.outOfTime ?? (() => false),
  };
}
