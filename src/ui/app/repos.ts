// Repositories: register, browse files at any ref, analyses, starting runs.

import { missingFor } from "./missing.ts";
import { api, ApiError, filePath, q, seg, type Page } from "./api.ts";
import { showIssues } from "./account.ts";
import { fmtTime, h, onLeave, show, statusBadge, timeAgo, viewError } from "./dom.ts";
import { experimentHref } from "./experiment.ts";
import { renderMarkdown, repoPath } from "./markdown.ts";
import { highlight } from "./highlight.ts";

interface Repository {
  id: string;
  name: string;
  url: string;
  provider: string;
  default_branch: string;
  created_at: string;
}
interface Refs {
  head: string | null;
  branches: { name: string; commit_hash: string }[];
  tags: { name: string; commit_hash: string }[];
}
interface Tree {
  commit_hash: string;
  path: string;
  entries: { name: string; path: string; type: string; size: number | null }[];
}
interface FileView {
  commit_hash: string;
  path: string;
  size: number;
  encoding: "utf-8" | "base64";
  content: string;
  truncated: boolean;
}
interface Parameter {
  name: string;
  value: string | number | boolean | null;
  category: string | null;
  cli_option: string | null;
  /** Passed as this environment variable (a server's PORT) rather than as an argument. */
  env_var?: string | null;
  choices: (string | number)[] | null;
  description: string | null;
}
interface Experiment {
  id: string;
  title: string;
  description: string | null;
  entry_point: string;
  language: string;
  parameters: Parameter[];
  /** The variables this experiment cannot start without (the API fills it for older analyses). */
  required_env_vars?: string[];
}
export interface Analysis {
  id: string;
  repository_id: string;
  commit_hash: string;
  branch: string | null;
  status: string;
  created_at: string;
  completed_at: string | null;
  repo_summary: unknown;
  experiments: Experiment[] | null;
  primary_ids: string[] | null;
  env_vars: { valid: boolean; required_env_vars: string[]; missing_env_vars: string[] } | null;
  error: string | null;
}

const COMPUTE_TYPES = ["cpu-general", "cpu-memory", "gpu-a10g"];

export async function reposPage(): Promise<void> {
  const list = h("tbody");
  const reload = async () => {
    const page = await api<Page<Repository>>("/v1/repositories?limit=100");
    list.replaceChildren(
      ...page.items.map((r) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/repos/${r.id}` }, r.name)),
          h("td", {}, h("code", {}, r.url)),
          h("td", {}, r.provider),
          h("td", {}, r.default_branch),
          h("td", {}, fmtTime(r.created_at)),
        ),
      ),
    );
    if (!page.items.length) list.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No repository yet: register one below.")));
  };
  const url = h("input", { id: "repo-url", required: true, placeholder: "https://github.com/org/repo.git" });
  const name = h("input", { id: "repo-name", placeholder: "optional" });
  const errs = { url: h("span", { class: "field-error" }), name: h("span", { class: "field-error" }) };
  const general = h("p", { class: "error", role: "alert" });
  const form = h(
    "form",
    { class: "stack" },
    h("label", { for: "repo-url" }, "Clone URL", url, errs.url),
    h("label", { for: "repo-name" }, "Name", name, errs.name),
    h("button", { type: "submit" }, "Register"),
    general,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await api<Repository>("/v1/repositories", {
        method: "POST",
        json: { url: url.value.trim(), ...(name.value.trim() && { name: name.value.trim() }) },
      });
      location.hash = `#/repos/${r.id}`;
    } catch (err) {
      showIssues(err, errs, general);
    }
  });
  show(
    h("h1", {}, "Repositories"),
    h("table", {}, h("thead", {}, h("tr", {}, ...["Name", "URL", "Provider", "Default branch", "Registered"].map((t) => h("th", { scope: "col" }, t)))), list),
    h("h2", {}, "Register a repository"),
    form,
  );
  await reload();
}

const repoLink = (id: string, ref: string, path: string) => `#/repos/${id}${q({ ref, path })}`;

export async function repoPage(id: string, query: URLSearchParams): Promise<void> {
  const [repo, refs] = await Promise.all([api<Repository>(`/v1/repositories/${seg(id)}`), api<Refs>(`/v1/repositories/${seg(id)}/refs`)]);
  const ref = query.get("ref") || repo.default_branch;
  const path = query.get("path") ?? "";
  const refInput = h("input", { id: "ref", value: ref, list: "ref-names", size: 40 });
  const refForm = h(
    "form",
    { class: "inline" },
    h("label", { for: "ref" }, "Branch, tag or commit", refInput),
    h("datalist", { id: "ref-names" }, ...[...refs.branches, ...refs.tags].map((r) => h("option", { value: r.name }))),
    h("button", { type: "submit" }, "Browse"),
  );
  refForm.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = repoLink(id, refInput.value.trim(), "");
  });
  const crumbs = h(
    "nav",
    { "aria-label": "Path" },
    h("a", { href: repoLink(id, ref, "") }, repo.name),
    ...path
      .split("/")
      .filter(Boolean)
      .flatMap((part, i, all) => [" / ", h("a", { href: repoLink(id, ref, all.slice(0, i + 1).join("/")) }, part)]),
  );
  const content = h("section", { "aria-label": "Files" });
  const main = show(h("h1", {}, repo.name), h("p", { class: "muted" }, repo.url), refForm, crumbs, content);

  let commit: string;
  // The ref's commit (message, author, date), read beside the listing; without it the line shows the hash alone.
  const info = api<CommitInfo>(`/v1/repositories/${seg(id)}/commits/${seg(ref)}`).catch(() => null);
  try {
    const tree = await api<Tree>(`/v1/repositories/${seg(id)}/files${q({ ref, path })}`);
    commit = tree.commit_hash;
    content.append(
      lastCommit(id, tree.commit_hash, await info),
      h(
        "table",
        { id: "tree" },
        h(
          "tbody",
          {},
          ...tree.entries
            .sort((a, b) => (a.type === "dir" ? 0 : 1) - (b.type === "dir" ? 0 : 1) || a.name.localeCompare(b.name))
            .map((e) =>
              h(
                "tr",
                { "data-type": e.type },
                h(
                  "td",
                  {},
                  e.type === "dir" || e.type === "file"
                    ? h("a", { href: repoLink(id, ref, e.path) }, e.type === "dir" ? `${e.name}/` : e.name)
                    : `${e.name} (${e.type})`,
                ),
                h("td", { class: "muted" }, e.size === null ? "" : `${e.size} B`),
              ),
            ),
        ),
      ),
    );
    // The directory's README, rendered (src/ui/app/markdown.ts: text nodes only, nothing external loaded).
    const readme = tree.entries.find((e) => e.type === "file" && /^readme(\.(md|markdown|txt))?$/i.test(e.name));
    if (readme) content.append(await readmeSection(id, ref, readme.path, path));
  } catch (err) {
    // Not a directory (404): a file, then. An unknown ref is said here, the page kept.
    if (!(err instanceof ApiError) || err.status !== 404) throw err;
    if (!path) {
      content.append(h("div", { class: "error", role: "alert", id: "view-error" }, h("p", {}, `Nothing to show at “${ref}”: ${err.message}`)));
      return;
    }
    const file = await api<FileView>(`/v1/repositories/${seg(id)}/files/${filePath(path)}${q({ ref })}`);
    commit = file.commit_hash;
    content.append(lastCommit(id, file.commit_hash, await info, `${file.size} bytes`));
    if (file.encoding === "base64") content.append(h("p", { class: "notice", id: "binary-notice" }, "A binary file: its content is not shown."));
    else {
      if (file.truncated)
        content.append(h("p", { class: "notice", id: "truncated-notice" }, "The file is larger than the API returns: only its beginning is shown."));
      content.append(highlight(file.content, path));
    }
  }
  if (commit) main.append(...(await runAndAnalysePanel(repo, commit, refs.branches.some((b) => b.name === ref) ? ref : null)));
}

interface CommitInfo {
  commit_hash: string;
  title: string;
  message: string;
  author: { name: string; email: string; date: string };
}

/**
 * The commit shown: its message's first line (the whole message on hover), its short hash linking to
 * its runs, its author and when it was written (relative; the local date and time on hover).
 */
function lastCommit(repoId: string, hash: string, info: CommitInfo | null, extra?: string): HTMLElement {
  const runs = h("a", { href: `#/runs${q({ repository_id: repoId, commit: hash })}`, title: `This commit's runs (${hash})` }, h("code", {}, hash.slice(0, 10)));
  // Only when it is this commit's: a branch may have moved between the two reads.
  const mine = info?.commit_hash === hash ? info : null;
  return h(
    "p",
    { id: "last-commit", "data-commit": hash },
    mine ? [h("span", { class: "commit-title", title: mine.message }, mine.title || "(no message)"), " · "] : "Commit ",
    runs,
    mine ? [" · ", h("span", { class: "commit-author" }, mine.author.name), " · ", timeAgo(mine.author.date)] : "",
    extra ? ` · ${extra}` : "",
  );
}

async function readmeSection(id: string, ref: string, file: string, dir: string): Promise<HTMLElement> {
  const section = h("section", { id: "readme", "aria-labelledby": "readme-title" }, h("h2", { id: "readme-title" }, file.split("/").at(-1)));
  try {
    const f = await api<FileView>(`/v1/repositories/${seg(id)}/files/${filePath(file)}${q({ ref })}`);
    if (f.encoding === "base64") section.append(h("p", { class: "muted" }, "Not text: not shown."));
    else if (/\.txt$/i.test(file)) section.append(h("pre", {}, f.content));
    else section.append(h("div", { class: "markdown" }, ...renderMarkdown(f.content, (p) => repoLink(id, ref, repoPath(p, dir)))));
    if (f.truncated) section.append(h("p", { class: "notice" }, "Only its beginning is shown: the file is larger than the API returns."));
  } catch (err) {
    section.append(h("p", { class: "error", role: "alert" }, viewError(err)));
  }
  return section;
}

async function runAndAnalysePanel(repo: Repository, commit: string, branch: string | null): Promise<HTMLElement[]> {
  const analyses = await api<Page<Analysis>>(`/v1/repositories/${seg(repo.id)}/analysis?limit=10`).catch(() => null);
  const analyse = h("button", { type: "button", id: "analyse" }, `Analyse ${commit.slice(0, 12)}`);
  const analyseError = h("p", { class: "error", role: "alert" });
  analyse.addEventListener("click", async () => {
    try {
      const a = await api<Analysis>(`/v1/repositories/${seg(repo.id)}/analysis/${seg(commit)}`, { method: "POST", json: branch ? { branch } : {} });
      location.hash = `#/repos/${repo.id}/analysis/${a.commit_hash}`;
    } catch (err) {
      analyseError.textContent = err instanceof Error ? err.message : String(err);
    }
  });
  const command = h("input", { id: "run-command", required: true, placeholder: 'python3 train.py --epochs 3  or  ["sh", "-c", "echo hi"]', size: 60 });
  const form = runOptionsForm(
    repo.id,
    commit,
    () => {
      const text = command.value.trim();
      return { command: text.startsWith("[") ? (JSON.parse(text) as string[]) : text.split(/\s+/) };
    },
    [h("label", { for: "run-command" }, "Command (words, or a JSON array of arguments)", command)],
  );
  return [
    h("h2", {}, "Analyses"),
    analyses && analyses.items.length
      ? h(
          "ul",
          {},
          ...analyses.items.map((a) =>
            h(
              "li",
              {},
              h("a", { href: `#/repos/${repo.id}/analysis/${a.commit_hash}` }, a.commit_hash.slice(0, 12)),
              " ",
              statusBadge(a.status),
              ` ${a.branch ?? ""} · ${fmtTime(a.created_at)}`,
            ),
          ),
        )
      : h("p", { class: "muted" }, "No analysis yet."),
    analyse,
    analyseError,
    h("h2", {}, "Run a command at this commit"),
    form,
    h(
      "p",
      {},
      h("a", { href: `#/runs${q({ repository_id: repo.id })}` }, "Runs of this repository"),
      " · ",
      h("a", { href: `#/env${q({ repository_id: repo.id })}` }, "Its environment variables"),
    ),
  ];
}

/** Compute type and timeout, the API's 422 messages next to the fields; `body` gives the rest of the request. */
export function runOptionsForm(
  repoId: string,
  commit: string,
  body: () => Record<string, unknown>,
  fields: HTMLElement[],
  paramErrors: Record<string, HTMLElement> = {},
  /** Why the run cannot start yet (its missing variables): Start run is disabled and says so. */
  blocked: HTMLElement | null = null,
): HTMLFormElement {
  const compute = h("select", { name: "compute_type" }, ...COMPUTE_TYPES.map((c) => h("option", { value: c }, c)));
  const timeout = h("input", { name: "timeout_seconds", type: "number", min: 1, placeholder: "operator default" });
  const errs: Record<string, HTMLElement> = {
    command: h("span", { class: "field-error" }),
    compute_type: h("span", { class: "field-error" }),
    timeout_seconds: h("span", { class: "field-error" }),
    ...paramErrors,
  };
  const general = h("p", { class: "error", role: "alert" });
  // novalidate: the API's own 422 messages are the ones shown, next to their fields.
  const form = h(
    "form",
    { class: "stack", novalidate: true },
    ...fields,
    errs.command,
    h("label", {}, "Compute type", compute, errs.compute_type),
    h("label", {}, "Timeout (seconds)", timeout, errs.timeout_seconds),
    blocked,
    h("button", { type: "submit", disabled: blocked !== null, ...(blocked && { "aria-describedby": blocked.id }) }, "Start run"),
    general,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const run = await api<{ run_id: string }>(`/v1/repositories/${seg(repoId)}/${seg(commit)}/runs`, {
        method: "POST",
        json: { ...body(), compute_type: compute.value, ...(timeout.value && { timeout_seconds: Number(timeout.value) }) },
      });
      location.hash = `#/runs/${run.run_id}`;
    } catch (err) {
      showIssues(err, errs, general);
    }
  });
  return form;
}

export async function analysisPage(repoId: string, commit: string): Promise<void> {
  const url = `/v1/repositories/${seg(repoId)}/analysis/${seg(commit)}`;
  let a = await api<Analysis>(url);
  const render = () => {
    const env = a.env_vars;
    show(
      h("h1", {}, `Analysis of ${a.commit_hash.slice(0, 12)}`),
      h(
        "p",
        {},
        h("a", { href: `#/repos/${repoId}${q({ ref: a.commit_hash })}` }, "Browse this commit"),
        " · status ",
        statusBadge(a.status),
        ` · ${fmtTime(a.created_at)}`,
      ),
      a.error ? h("p", { class: "error" }, a.error) : null,
      a.repo_summary ? h("details", { open: true }, h("summary", {}, "Summary"), summaryView(a.repo_summary)) : null,
      env && env.missing_env_vars.length
        ? h(
            "div",
            { class: "notice", id: "missing-env" },
            "Missing environment variables (each experiment below says which it needs): ",
            ...envLinks(repoId, env.missing_env_vars),
          )
        : null,
      h("h2", {}, "Experiments"),
      ...(a.experiments ?? []).map((x) => experimentView(repoId, a, x)),
    );
  };
  render();
  if (a.status === "pending" || a.status === "running") {
    const timer = setInterval(async () => {
      a = await api<Analysis>(url);
      if (a.status !== "pending" && a.status !== "running") clearInterval(timer);
      render();
    }, 2000);
    onLeave(() => clearInterval(timer));
  }
}

function summaryView(s: unknown): HTMLElement {
  if (typeof s !== "object" || s === null) return h("p", {}, String(s));
  const o = s as {
    title?: string | null;
    text?: string | null;
    description?: string | null;
    languages?: { name: string; files: number; lines: number }[];
    license?: unknown;
    frameworks?: unknown[];
    file_count?: number;
  };
  const rest = Object.entries(o).filter(([k]) => !["title", "text", "description", "languages"].includes(k));
  return h(
    "div",
    { id: "summary" },
    o.title ? h("h3", {}, o.title) : null,
    o.text ? h("p", {}, o.text) : null,
    o.description ? h("p", { class: "muted" }, o.description) : null,
    o.languages?.length ? h("p", {}, "Languages: ", o.languages.map((l) => `${l.name} (${l.files} files, ${l.lines} lines)`).join(", ")) : null,
    h(
      "details",
      {},
      h("summary", {}, "Details"),
      h("dl", {}, ...rest.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "string" ? v : JSON.stringify(v))])),
    ),
  );
}

function experimentView(repoId: string, a: Analysis, x: Experiment): HTMLElement {
  const inputs: Record<string, HTMLInputElement | HTMLSelectElement> = {};
  const errs: Record<string, HTMLElement> = {};
  const fields = x.parameters.map((p) => {
    const id = `p-${x.id}-${p.name}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const input = p.choices?.length
      ? h("select", { id }, ...p.choices.map((c) => h("option", { value: String(c), selected: String(c) === String(p.value) }, String(c))))
      : typeof p.value === "boolean"
        ? h("input", { id, type: "checkbox", checked: p.value })
        : h("input", { id, value: p.value === null ? "" : String(p.value), type: typeof p.value === "number" ? "number" : "text", step: "any" });
    inputs[p.name] = input;
    errs[p.name] = h("span", { class: "field-error", "data-error-for": p.name });
    return h(
      "label",
      { for: id },
      `${p.name}${p.env_var ? ` ($${p.env_var})` : p.cli_option ? ` (${p.cli_option})` : ""}`,
      input,
      p.description ? h("span", { class: "muted" }, p.description) : null,
      errs[p.name],
    );
  });
  const body = () => {
    const parameters: Record<string, unknown> = {};
    for (const p of x.parameters) {
      const el = inputs[p.name]!;
      const v = el instanceof HTMLInputElement && el.type === "checkbox" ? el.checked : el.value;
      if (String(v) === String(p.value ?? "")) continue;
      parameters[p.name] = typeof p.value === "number" && v !== "" && !Number.isNaN(Number(v)) ? Number(v) : v;
    }
    return { analyzed_experiment: x.id, parameters };
  };
  const primary = a.primary_ids?.includes(x.id);
  const missing = missingFor(x, a);
  const blocked = missing.length
    ? h(
        "p",
        { class: "notice missing-env", id: `missing-${x.id}`.replace(/[^A-Za-z0-9_-]/g, "_") },
        "This experiment cannot start without ",
        ...envLinks(repoId, missing),
        "(set them, then come back).",
      )
    : null;
  return h(
    "section",
    { class: "experiment", "data-experiment": x.id },
    h("h3", {}, x.title, primary ? " (primary)" : ""),
    h("p", {}, h("code", {}, x.entry_point), ` · ${x.language} · `, h("a", { href: experimentHref(repoId, x.id), class: "compare-link" }, "Compare its runs")),
    x.description ? h("p", {}, x.description) : null,
    a.status === "completed" ? runOptionsForm(repoId, a.commit_hash, body, fields, errs, blocked) : h("div", {}, ...fields),
  );
}

function envLinks(repoId: string, names: readonly string[]): (HTMLElement | string)[] {
  return names.flatMap((n) => [h("a", { href: `#/env${q({ repository_id: repoId, name: n })}` }, n), " "]);
}
