// Runs: the list (live by polling), and the run page with its live log.

import { api, q, seg, type Page } from "./api.ts";
import { fmtTime, h, onLeave, show, statusBadge } from "./dom.ts";
import { LogView } from "./logview.ts";

interface Run {
  run_id: string;
  repository_id: string;
  commit_hash: string;
  status: string;
  experiment_id: string | null;
  compute_type: string;
  run_config: { command: string[]; parameters: Record<string, unknown>; timeout_seconds: number };
  exit_code: number | null;
  error: string | null;
  duration_seconds: number | null;
  start_time: string | null;
  close_time: string | null;
  created_at: string;
}

const STATUSES = ["pending", "preprocessing", "running", "completed", "failed", "cancelled"];
const FINISHED = new Set(["completed", "failed", "cancelled"]);

export async function runsPage(query: URLSearchParams): Promise<void> {
  const status = h(
    "select",
    { id: "filter-status" },
    h("option", { value: "" }, "any"),
    ...STATUSES.map((s) => h("option", { value: s, selected: query.get("status") === s }, s)),
  );
  const repo = query.get("repository_id") ?? "";
  const body = h("tbody", { id: "runs" });
  const reload = async () => {
    const page = await api<Page<Run>>(`/v1/runs${q({ limit: 50, status: status.value, repository_id: repo })}`);
    body.replaceChildren(
      ...page.items.map((r) =>
        h(
          "tr",
          { "data-run-id": r.run_id },
          h("td", {}, h("a", { href: `#/runs/${r.run_id}` }, r.run_id.slice(-12))),
          h("td", {}, statusBadge(r.status)),
          h("td", {}, r.experiment_id ?? h("code", {}, r.run_config.command.join(" "))),
          h("td", {}, h("a", { href: `#/repos/${r.repository_id}${q({ ref: r.commit_hash })}` }, r.commit_hash.slice(0, 10))),
          h("td", {}, r.exit_code ?? ""),
          h("td", {}, fmtTime(r.created_at)),
        ),
      ),
    );
    if (!page.items.length) body.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No run matches.")));
  };
  status.addEventListener("change", () => {
    history.replaceState(null, "", `#/runs${q({ status: status.value, repository_id: repo })}`);
    void reload();
  });
  show(
    h("h1", {}, "Runs"),
    h("form", { class: "inline" }, h("label", { for: "filter-status" }, "Status", status), repo ? h("span", { class: "muted" }, `repository ${repo}`) : null),
    h("table", {}, h("thead", {}, h("tr", {}, ...["Run", "Status", "What", "Commit", "Exit", "Created"].map((t) => h("th", { scope: "col" }, t)))), body),
  );
  await reload();
  const timer = setInterval(() => void reload().catch(() => {}), 3000);
  onLeave(() => clearInterval(timer));
}

export async function runPage(id: string): Promise<void> {
  let run = await api<Run>(`/v1/runs/${seg(id)}`);
  const head = h("div", {});
  const renderHead = () =>
    head.replaceChildren(
      h(
        "p",
        {},
        "Status ",
        statusBadge(run.status),
        run.exit_code !== null ? ` · exit code ${run.exit_code}` : "",
        run.duration_seconds !== null ? ` · ${run.duration_seconds.toFixed(1)} s` : "",
        ` · ${run.compute_type} · started ${fmtTime(run.start_time)}`,
      ),
      h("p", {}, run.experiment_id ? `experiment ${run.experiment_id} ` : "", h("code", {}, run.run_config.command.join(" "))),
      run.error ? h("p", { class: "error" }, run.error) : "",
      FINISHED.has(run.status)
        ? ""
        : h(
            "button",
            {
              type: "button",
              onclick: async () => {
                run = await api<Run>(`/v1/runs/${seg(id)}/cancel`, { method: "POST" });
                renderHead();
              },
            },
            "Cancel run",
          ),
    );
  renderHead();
  const view = new LogView(id, {
    onStatus: async () => {
      run = await api<Run>(`/v1/runs/${seg(id)}`);
      renderHead();
    },
  });
  show(
    h("h1", {}, `Run ${id}`),
    h("p", {}, h("a", { href: `#/repos/${run.repository_id}${q({ ref: run.commit_hash })}` }, "Its commit"), " · ", h("a", { href: "#/runs" }, "All runs")),
    head,
    view.element,
  );
  view.start();
  onLeave(() => view.stop());
}
