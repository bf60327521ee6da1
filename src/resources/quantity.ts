// Kubernetes quantities as numbers, for the built-in limiter's CPU and memory
// caps (docs/operators/limits.md): the compute types' requests and the caps
// are written as Kubernetes writes them ("250m", "2", "256Mi", "1G"), and the
// limiter adds them up. Only the suffixes compute types accept
// (compute-types.ts) are understood; anything else is null, and the caller
// says what was wrong.

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
const DECIMAL: Record<string, number> = { k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** Millicores in a CPU quantity ("2" → 2000, "250m" → 250, "0.5" → 500); null when it is not one. */
export function cpuMillis(quantity: string): number | null {
  const m = /^([0-9]+(?:\.[0-9]+)?)(m?)$/.exec(quantity.trim());
  if (!m) return null;
  // Kubernetes rounds a CPU request up to the millicore.
  return Math.ceil(Number(m[1]) * (m[2] ? 1 : 1000));
}

/** Bytes in a memory quantity ("256Mi", "1G", "1048576"); null when it is not one. */
export function memoryBytes(quantity: string): number | null {
  const m = /^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity.trim());
  if (!m) return null;
  const unit = m[2] ? (BINARY[m[2]] ?? DECIMAL[m[2]]!) : 1;
  return Math.ceil(Number(m[1]) * unit);
}

/** What a workload asks for, or what an account may have at once: millicores and bytes (0 in a cap: no cap). */
export interface CpuMemory {
  cpu: number;
  memory: number;
}

/** The CPU and memory a compute preset requests (absent: 0). */
export function presetRequests(requests: Readonly<Record<string, string>>): CpuMemory {
  return { cpu: requests.cpu ? (cpuMillis(requests.cpu) ?? 0) : 0, memory: requests.memory ? (memoryBytes(requests.memory) ?? 0) : 0 };
}

/** A quantity the way people read it back: "1500m" → "1.5", bytes in the largest binary unit that divides them. */
export function formatCpu(millis: number): string {
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

export function formatMemory(bytes: number): string {
  for (const [unit, size] of Object.entries(BINARY).reverse()) if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  return String(bytes);
}
