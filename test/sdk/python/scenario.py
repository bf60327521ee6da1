"""Drives the Python SDK (clients/python) against the service test/sdk/python.test.ts started.

Reads a plan as JSON on stdin, prints one JSON object of results on stdout.
Talks only to the loopback URLs in the plan.
"""

import json
import sys
import traceback

from codeplane import AuthError, Codeplane, NotFoundError, ValidationError, WaitTimeout
from codeplane._api.api.environment_variables import create_environment_variable, list_environment_variables
from codeplane._api.models.create_environment_variable import CreateEnvironmentVariable


def seqs(events):
    return [e.seq for e in events if e.type in ("stdout", "stderr")]


def step(name: str) -> None:
    print(f"step: {name}", file=sys.stderr, flush=True)


def main() -> None:
    plan = json.load(sys.stdin)
    out: dict = {}
    with Codeplane(plan["url"], plan["token"]) as cp:
        step("stream")
        events = list(cp.stream_run_logs(plan["run"]))
        out["all"] = seqs(events)
        out["last"] = {"type": events[-1].type, "status": events[-1].status, "exit_code": events[-1].exit_code}
        out["first_stderr"] = next({"seq": e.seq, "id": e.id, "line": e.line[:7]} for e in events if e.type == "stderr")
        out["resumed"] = seqs(cp.stream_run_logs(plan["run"], last_event_id="25"))

        step("errors")
        try:
            cp.get_run(plan["missing"])
        except NotFoundError as e:
            out["not_found"] = {"status": e.status, "detail": e.detail}
        try:
            cp.call(create_environment_variable, body=CreateEnvironmentVariable(name="1 not a name", value="v", secret=False))
        except ValidationError as e:
            out["invalid"] = {"status": e.status, "loc": e.issues[0].loc}
        try:
            Codeplane(plan["url"], "cp_not_a_key").get_run(plan["missing"])
        except AuthError as e:
            out["unauthenticated"] = e.status
        try:
            cp.wait_for_run(plan["running"], timeout=0.3, interval=0.05)
        except WaitTimeout:
            out["wait_timeout"] = True

        step("pages")
        for n in range(1, 6):
            cp.call(create_environment_variable, body=CreateEnvironmentVariable(name=f"PY_PAGE_{n}", value="v", secret=False))
        out["paged"] = sorted(v.name for v in cp.paginate(list_environment_variables, limit=2) if v.name.startswith("PY_PAGE_"))

    step("through a dropping proxy")
    with Codeplane(plan["proxy"], plan["token"]) as through_proxy:
        out["through_drops"] = seqs(through_proxy.stream_run_logs(plan["long_run"], max_delay=0.2))

    with Codeplane(plan["url"], plan["token"]) as cp:
        print("waiting", file=sys.stderr, flush=True)
        analysis = cp.wait_for_analysis(plan["repository"], plan["commit"], timeout=120, interval=0.1)
        out["analysis"] = {"status": str(analysis.status), "commit": analysis.commit_hash}
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except Exception:  # report, so the test shows the Python side's failure
        print(json.dumps({"traceback": traceback.format_exc()}))
