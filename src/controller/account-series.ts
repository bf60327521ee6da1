// Per-account series with bounded cardinality (docs/operators/metrics.md): an
// installation may have any number of accounts, and a Prometheus series per
// account and value would grow without bound. So a per-account gauge has one
// series for each of the `max` accounts with the largest values (ties by id)
// and one, account="other", with the sum of the rest; accounts at 0 get no
// series. At most max + 1 series per gauge, whatever the number of accounts.
// Pure; table-tested.

/** The accounts' series: the `max` largest values by account, the rest summed as "other"; zeros left out. */
export function accountSeries(values: ReadonlyMap<string, number>, max: number): [string, number][] {
  const sorted = [...values].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const top = sorted.slice(0, max);
  const rest = sorted.slice(max).reduce((n, [, v]) => n + v, 0);
  return rest > 0 ? [...top, ["other", rest]] : top;
}
