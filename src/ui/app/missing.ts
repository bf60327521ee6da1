// Pure: which variables one experiment of an analysis still needs.

/**
 * The variables an experiment needs that are not configured: its own
 * required ones among the analysis's missing ones (which the API computes
 * at each read, over every experiment's), as the API refuses its runs. An
 * experiment without its own list (an analysis from before they existed)
 * needs all of them, as the API then checks.
 */
export function missingFor(experiment: { required_env_vars?: string[] }, analysis: { env_vars: { missing_env_vars: string[] } | null }): string[] {
  const missing = new Set(analysis.env_vars?.missing_env_vars ?? []);
  return (experiment.required_env_vars ?? [...missing]).filter((n) => missing.has(n));
}
