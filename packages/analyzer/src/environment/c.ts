import { emptyPart, has, type EnvironmentInput, type EnvironmentPart } from "./part.ts";

// C and C++ built with Make or CMake: the image must hold a compiler and make
// (build-essential). The build itself is the experiment's business (`make
// run` builds what it runs), so there is no install step. A Makefile alone
// is not C: many drive Python or Docker.

const SOURCES = /\.(c|h|cc|cpp|cxx|c\+\+|hh|hpp|hxx)$/i;
const MAKEFILES = ["Makefile", "makefile", "GNUmakefile"];

export function resolveC(input: EnvironmentInput): EnvironmentPart {
  const { ctx } = input;
  const part = emptyPart();
  const makefile = MAKEFILES.find((m) => has(ctx, m));
  const cmake = has(ctx, "CMakeLists.txt");
  if (!makefile && !cmake) return part;
  const sources = ctx.files.filter((f) => SOURCES.test(f.path)).length;
  if (sources === 0) return part;
  const by = [makefile, cmake ? "CMakeLists.txt" : null].filter(Boolean).join(" and ");
  part.toolchains.push({ name: "c", version: null, exact: false, source: `${by} with ${sources} C/C++ source file${sources === 1 ? "" : "s"}` });
  if (cmake) part.toolchains.push({ name: "cmake", version: null, exact: false, source: "CMakeLists.txt" });
  return part;
}
