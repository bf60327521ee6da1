import type { AnalyzerResult, Experiment, Parameter, ParameterCategory, ParameterValue } from "../model.ts";

// Scoring an analysis against hand-written labels (the corpus under
// fixtures/corpus/ of this package, see ../corpus.test.ts): what a person reading
// the repository's code says can be run, with which parameters (name, default
// and type), and which environment variables it cannot start without.

export interface CorpusLabels {
  /** What the repository imitates, for a reader of the corpus. */
  about: string;
  /** Experiment id → its parameters by name (default value and category). */
  entries: Record<string, Record<string, LabelledParameter>>;
  /** Experiment id → its entry_point, where the repository says how it is launched (`torchrun ... train.py`). */
  entry_points?: Record<string, string>;
  /** Experiment id → the files it reads and writes, as a person reads them off the code (sorted). */
  io?: Record<string, { inputs: string[]; outputs: string[] }>;
  /** Experiment id → names that must not be among its parameters (a Makefile's toolchain variables); each counts as a labelled parameter. */
  absent_parameters?: Record<string, string[]>;
  /** Variables the program cannot start without, that the user must set: the union over its entries. */
  required_env: string[];
  /** Experiment id → the variables that entry cannot start without (what its entry point reaches); an entry not listed needs none. */
  required_env_by_entry?: Record<string, string[]>;
  /** The experiment a user most likely came to run (what `primary_ids` should start with), where a person can tell. */
  primary?: string;
  /** The summary's title and description as a person reads them off the README (where labelled). */
  summary?: { title: string | null; description: string | null };
}

/** A parameter as a person reads it: its default and category, and where labelled, its description and choices too. */
export interface LabelledParameter {
  value: ParameterValue;
  category: ParameterCategory;
  description?: string;
  choices?: (string | number | boolean)[];
  /** The environment variable it is passed as (a server's PORT), where labelled. */
  env_var?: string;
}

export interface Score {
  entries: { labelled: number; found: number; matched: number; missed: string[]; extra: string[] };
  /** Over the labelled entries found: a parameter counts when its name, default and category (and its description and choices, where labelled) are all right, or, labelled absent, when it is absent. */
  parameters: { labelled: number; right: number; named: number; wrong: string[] };
  requiredEnv: { labelled: number; reported: number; right: number; wrongly: string[]; missed: string[] };
  /** The same per experiment, over the labelled entries found: an entry's variables against its `required_env_vars`. */
  entryEnv: { labelled: number; reported: number; right: number; wrongly: string[]; missed: string[] };
  /** Repositories with a labelled primary experiment, and those whose primary_ids start with it. */
  primary: { labelled: number; right: number; wrong: string[] };
  /** Entries with labelled inputs and outputs, and those whose both lists are right. */
  io: { labelled: number; right: number; wrong: string[] };
  /** Repositories with a labelled summary, and those whose title and description are both right. */
  summary: { labelled: number; right: number; wrong: string[] };
}

export function emptyScore(): Score {
  return {
    entries: { labelled: 0, found: 0, matched: 0, missed: [], extra: [] },
    parameters: { labelled: 0, right: 0, named: 0, wrong: [] },
    requiredEnv: { labelled: 0, reported: 0, right: 0, wrongly: [], missed: [] },
    entryEnv: { labelled: 0, reported: 0, right: 0, wrongly: [], missed: [] },
    primary: { labelled: 0, right: 0, wrong: [] },
    summary: { labelled: 0, right: 0, wrong: [] },
    io: { labelled: 0, right: 0, wrong: [] },
  };
}

export function scoreAnalysis(
  result: Pick<AnalyzerResult, "experiments" | "env_vars" | "primary_ids"> & { repo_summary?: Pick<AnalyzerResult["repo_summary"], "title" | "description"> },
  labels: CorpusLabels,
  into: Score = emptyScore(),
  prefix = "",
): Score {
  if (labels.primary) {
    into.primary.labelled += 1;
    if (result.primary_ids[0] === labels.primary) into.primary.right += 1;
    else into.primary.wrong.push(`${prefix}${result.primary_ids[0] ?? "none"}, want ${labels.primary}`);
  }
  if (labels.summary) scoreSummary(result.repo_summary, labels.summary, into, prefix);
  const found = new Map(result.experiments.map((e) => [e.id, e]));
  const labelled = Object.keys(labels.entries);
  into.entries.labelled += labelled.length;
  into.entries.found += found.size;
  for (const id of labelled) {
    const e = found.get(id);
    const params = Object.entries(labels.entries[id]!);
    into.parameters.labelled += params.length;
    if (!e) {
      into.entries.missed.push(`${prefix}${id}`);
      for (const [name] of params) into.parameters.wrong.push(`${prefix}${id} ${name}: entry not found`);
      continue;
    }
    const launch = labels.entry_points?.[id];
    if (launch !== undefined && e.entry_point !== launch) into.entries.missed.push(`${prefix}${id} (run as ${e.entry_point}, want ${launch})`);
    else into.entries.matched += 1;
    const wantEnv = new Set(labels.required_env_by_entry?.[id] ?? []);
    const gotEnv = e.required_env_vars ?? [];
    into.entryEnv.labelled += wantEnv.size;
    into.entryEnv.reported += gotEnv.length;
    for (const name of gotEnv) {
      if (wantEnv.has(name)) into.entryEnv.right += 1;
      else into.entryEnv.wrongly.push(`${prefix}${id} ${name}`);
    }
    for (const name of wantEnv) if (!gotEnv.includes(name)) into.entryEnv.missed.push(`${prefix}${id} ${name}`);
    const io = labels.io?.[id];
    if (io) scoreFiles(e, io, into, `${prefix}${id}`);
    scoreParameters(e, params, labels.absent_parameters?.[id] ?? [], into, `${prefix}${id}`);
  }
  for (const id of found.keys()) if (!(id in labels.entries)) into.entries.extra.push(`${prefix}${id}`);
  const required = new Set(labels.required_env);
  const reported = result.env_vars.filter((v) => v.required).map((v) => v.name);
  into.requiredEnv.labelled += required.size;
  into.requiredEnv.reported += reported.length;
  for (const name of reported) {
    if (required.has(name)) into.requiredEnv.right += 1;
    else into.requiredEnv.wrongly.push(`${prefix}${name}`);
  }
  for (const name of required) if (!reported.includes(name)) into.requiredEnv.missed.push(`${prefix}${name}`);
  return into;
}

function scoreFiles(e: Experiment, want: { inputs: string[]; outputs: string[] }, into: Score, where: string): void {
  into.io.labelled += 1;
  const got = { inputs: [...e.inputs].sort(), outputs: [...e.outputs].sort() };
  if (JSON.stringify(got) === JSON.stringify({ inputs: [...want.inputs].sort(), outputs: [...want.outputs].sort() })) into.io.right += 1;
  else into.io.wrong.push(`${where}: ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

function scoreSummary(
  summary: Pick<AnalyzerResult["repo_summary"], "title" | "description"> | undefined,
  want: NonNullable<CorpusLabels["summary"]>,
  into: Score,
  prefix: string,
): void {
  into.summary.labelled += 1;
  const got = { title: summary?.title ?? null, description: summary?.description ?? null };
  if (got.title === want.title && got.description === want.description) into.summary.right += 1;
  else into.summary.wrong.push(`${prefix}${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

function scoreParameters(e: Experiment, params: [string, LabelledParameter][], absent: string[], into: Score, where: string): void {
  const show = (p: Pick<Parameter, "category" | "value" | "description" | "choices" | "env_var">, want: LabelledParameter) =>
    `${p.category} ${JSON.stringify(p.value)}${want.description !== undefined ? ` ${JSON.stringify(p.description)}` : ""}${want.choices !== undefined ? ` ${JSON.stringify(p.choices)}` : ""}${want.env_var !== undefined ? ` $${p.env_var ?? "(an argument)"}` : ""}`;
  const wanted = (want: LabelledParameter) => show({ ...want, description: want.description ?? null, choices: want.choices ?? null }, want);
  for (const [name, want] of params) {
    const got = e.parameters.find((p) => p.name === name);
    if (got) into.parameters.named += 1;
    if (got && show(got, want) === wanted(want)) into.parameters.right += 1;
    else into.parameters.wrong.push(`${where} ${name}: ${got ? show(got, want) : "missing"}, want ${wanted(want)}`);
  }
  for (const name of absent) {
    into.parameters.labelled += 1;
    if (!e.parameters.some((p) => p.name === name)) {
      into.parameters.right += 1;
      into.parameters.named += 1;
    } else into.parameters.wrong.push(`${where} ${name}: present, want absent`);
  }
}

const pct = (n: number, d: number) => (d === 0 ? 1 : n / d);

export function figures(s: Score) {
  return {
    entryRecall: pct(s.entries.matched, s.entries.labelled),
    entryPrecision: pct(s.entries.matched, s.entries.found),
    parameterRecall: pct(s.parameters.right, s.parameters.labelled),
    parameterNamed: pct(s.parameters.named, s.parameters.labelled),
    requiredPrecision: pct(s.requiredEnv.right, s.requiredEnv.reported),
    requiredRecall: pct(s.requiredEnv.right, s.requiredEnv.labelled),
    entryRequiredPrecision: pct(s.entryEnv.right, s.entryEnv.reported),
    entryRequiredRecall: pct(s.entryEnv.right, s.entryEnv.labelled),
    mainPick: pct(s.primary.right, s.primary.labelled),
    summaryRight: pct(s.summary.right, s.summary.labelled),
    ioRight: pct(s.io.right, s.io.labelled),
  };
}

export function report(s: Score): string {
  const f = figures(s);
  const p = (x: number) => `${(x * 100).toFixed(1)}%`;
  return [
    `entries: recall ${p(f.entryRecall)} (${s.entries.matched}/${s.entries.labelled}), precision ${p(f.entryPrecision)} (${s.entries.matched}/${s.entries.found})`,
    `parameters: recall with default and type ${p(f.parameterRecall)} (${s.parameters.right}/${s.parameters.labelled}), by name ${p(f.parameterNamed)}`,
    `required variables: precision ${p(f.requiredPrecision)} (${s.requiredEnv.right}/${s.requiredEnv.reported}), recall ${p(f.requiredRecall)} (${s.requiredEnv.right}/${s.requiredEnv.labelled})`,
    `required variables per experiment: precision ${p(f.entryRequiredPrecision)} (${s.entryEnv.right}/${s.entryEnv.reported}), recall ${p(f.entryRequiredRecall)} (${s.entryEnv.right}/${s.entryEnv.labelled})`,
    `main pick: ${p(f.mainPick)} (${s.primary.right}/${s.primary.labelled})`,
    `summary title and description: ${p(f.summaryRight)} (${s.summary.right}/${s.summary.labelled})`,
    `inputs and outputs: ${p(f.ioRight)} (${s.io.right}/${s.io.labelled})`,
    ...(s.entries.missed.length ? [`  missed entries: ${s.entries.missed.join(", ")}`] : []),
    ...(s.entries.extra.length ? [`  extra entries: ${s.entries.extra.join(", ")}`] : []),
    ...(s.parameters.wrong.length ? [`  parameters not right:\n    ${s.parameters.wrong.join("\n    ")}`] : []),
    ...(s.requiredEnv.wrongly.length ? [`  wrongly required: ${s.requiredEnv.wrongly.join(", ")}`] : []),
    ...(s.requiredEnv.missed.length ? [`  required, not reported: ${s.requiredEnv.missed.join(", ")}`] : []),
    ...(s.entryEnv.wrongly.length ? [`  wrongly required by an experiment: ${s.entryEnv.wrongly.join(", ")}`] : []),
    ...(s.primary.wrong.length ? [`  main pick wrong: ${s.primary.wrong.join(", ")}`] : []),
    ...(s.summary.wrong.length ? [`  summary wrong:\n    ${s.summary.wrong.join("\n    ")}`] : []),
    ...(s.io.wrong.length ? [`  inputs and outputs wrong:\n    ${s.io.wrong.join("\n    ")}`] : []),
    ...(s.entryEnv.missed.length ? [`  required by an experiment, not reported: ${s.entryEnv.missed.join(", ")}`] : []),
  ].join("\n");
}
