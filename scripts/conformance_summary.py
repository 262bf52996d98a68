#!/usr/bin/env python3
"""Summarise MCP conformance results and decide the CI gate (stdlib only).

Reads every checks.json under the results directory of a `--requirements` run (and of the
individually run pending scenarios), scores them against the requirements file shipped in the
npm package and against our baseline, writes summary.json and prints a table.

Exit status 1 when
  * a scored scenario has a FAILURE or WARNING not covered by the baseline, or did not run;
  * a baseline entry is stale (it passes now), so the baseline must shrink;
  * a pending scenario we gate on has a FAILURE or WARNING, or did not run, or reached no
    SUCCESS at all (a scenario the suite skips proves nothing); the scenarios the suite is known
    to skip wholesale (`--pending-skipped`) are reported as SKIPPED instead, explicitly, and fail
    once the suite exercises them (the list must then shrink);
  * a `--require-success scenario:check-id` has no SUCCESS row (or any FAILURE/WARNING row) in
    that scenario: this guards the scenarios that "pass" vacuously when the client does nothing.

Baseline semantics follow the suite's own `--expected-failures` (src/expected-failures.ts):
an entry is `<scenario>` (the whole scenario may fail) or `<scenario>:<check-id>`; per check id
the worst status counts (FAILURE > WARNING > SUCCESS > SKIPPED; INFO ignored); a check entry is
stale when its worst status is SUCCESS, a scenario entry when the scenario has no FAILURE or
WARNING; baselined checks that are absent or SKIPPED are tolerated.
"""

import argparse
import json
import os
import re
import sys

BAD = ("FAILURE", "WARNING")
RANK = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1, "SKIPPED": 0}
TIMESTAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(-\d{3})?Z$")


def strip_comment(line):
    """Drops a `#` comment that starts the line or follows whitespace."""
    m = re.search(r"(^|\s)#", line)
    return line[: m.start()] if m else line


def parse_flat_yaml(path):
    """Parses the flat YAML used by the requirements and baseline files.

    Top-level keys hold lists. A list item is either a scalar (`- name`) or a small mapping
    (`- scenario: x` followed by indented `key: value` lines); folded/multi-line values
    (`note: >-`) are skipped. Returns {key: [str | dict]}.
    """
    out = {}
    key = None
    item = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = strip_comment(raw.rstrip("\n")).rstrip()
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip(" "))
            text = line.strip()
            if indent == 0:
                m = re.fullmatch(r"([A-Za-z0-9_-]+):(\s*\[\])?", text)
                if not m:
                    raise ValueError(f"{path}: unsupported top-level line: {raw.rstrip()}")
                key = m.group(1)
                out[key] = []
                item = None
                continue
            if key is None:
                raise ValueError(f"{path}: list item outside a key: {raw.rstrip()}")
            if text.startswith("- "):
                body = text[2:].strip()
                m = re.fullmatch(r"([A-Za-z0-9_-]+): (.*)", body)
                if m:
                    item = {m.group(1): unquote(m.group(2))}
                    out[key].append(item)
                else:
                    item = None
                    out[key].append(unquote(body))
                continue
            m = re.fullmatch(r"([A-Za-z0-9_-]+):\s*(.*)", text)
            if m and isinstance(item, dict):
                value = m.group(2)
                if value not in (">-", ">", "|", "|-"):
                    item[m.group(1)] = unquote(value)
            # Anything else is the continuation of a folded value: ignore.
    return out


def unquote(s):
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


def load_results(results_dir, leg):
    """{scenario: [check, ...]} from every checks.json below results_dir."""
    scenarios = {}
    if not os.path.isdir(results_dir):
        return scenarios
    for root, _dirs, files in os.walk(results_dir):
        if "checks.json" not in files:
            continue
        name = TIMESTAMP.sub("", os.path.relpath(root, results_dir))
        if leg == "server" and name.startswith("server-"):
            name = name[len("server-"):]
        if leg == "client" and name.startswith("client-"):
            name = name[len("client-"):]
        with open(os.path.join(root, "checks.json"), encoding="utf-8") as f:
            checks = json.load(f)
        scenarios.setdefault(name, []).extend(checks)
    return scenarios


def worst_by_id(checks):
    """{check id: worst status}, ignoring INFO."""
    worst = {}
    for c in checks:
        status = c.get("status")
        if status == "INFO":
            continue
        prev = worst.get(c["id"])
        if prev is None or RANK.get(status, 0) >= RANK.get(prev, 0):
            worst[c["id"]] = status
    return worst


def describe(checks):
    counts = {}
    for c in checks:
        counts[c.get("status", "?")] = counts.get(c.get("status", "?"), 0) + 1
    return {
        "counts": counts,
        "failed": sorted({c["id"] for c in checks if c.get("status") == "FAILURE"}),
        "warnings": sorted({c["id"] for c in checks if c.get("status") == "WARNING"}),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True, help="output dir of the --requirements run")
    ap.add_argument("--pending-results", help="dir holding one -o dir per pending scenario")
    ap.add_argument(
        "--pending",
        default="",
        help="comma-separated pending scenarios to gate on (in --pending-results, else in --results)",
    )
    ap.add_argument(
        "--pending-skipped",
        default="",
        help="comma-separated pending scenarios the suite is known to skip wholesale (reported as SKIPPED)",
    )
    ap.add_argument("--requirements", required=True, help="requirements/<rev>.yaml of the suite")
    ap.add_argument("--baseline", required=True, help="our expected-failures file")
    ap.add_argument("--leg", default="server", choices=["server", "client"])
    ap.add_argument("--out", required=True, help="summary.json to write")
    ap.add_argument(
        "--require-success",
        default="",
        help="comma-separated scenario:check-id pairs that must have reached SUCCESS",
    )
    a = ap.parse_args()

    req = parse_flat_yaml(a.requirements)
    scored = [s for s in req.get(a.leg, []) if isinstance(s, str)]
    not_scored = {
        e["scenario"]: e.get("reason", "")
        for e in req.get("not_scored", [])
        if isinstance(e, dict) and e.get("leg") == a.leg and "scenario" in e
    }
    baseline_entries = [e for e in parse_flat_yaml(a.baseline).get(a.leg, []) if isinstance(e, str)]
    base_whole = {e for e in baseline_entries if ":" not in e}
    base_checks = {}
    for e in baseline_entries:
        if ":" in e:
            scen, check = e.split(":", 1)
            base_checks.setdefault(scen, set()).add(check)

    results = load_results(a.results, a.leg)
    pending_names = [p for p in a.pending.split(",") if p]
    # Each pending scenario ran on its own into <pending-results>/<scenario>/, or (without
    # --pending-results) within the --requirements run itself (its not-scored scenarios).
    pending_results = {}
    for name in pending_names:
        if a.pending_results:
            found = load_results(os.path.join(a.pending_results, name), a.leg)
        else:
            found = results
        if name in found:
            pending_results[name] = found[name]

    scenarios = {}
    scored_failed = {}
    expected = []
    stale = []
    for name in sorted(set(results) | set(scored)):
        checks = results.get(name)
        category = (
            "scored" if name in scored else f"not_scored:{not_scored.get(name, 'unlisted')}"
        )
        if checks is None:
            scenarios[name] = {"category": category, "ran": False}
            scored_failed[name] = ["(scenario did not run)"]
            continue
        info = describe(checks)
        info["category"] = category
        info["ran"] = True
        scenarios[name] = info
        if name not in scored:
            continue
        worst = worst_by_id(checks)
        bad_ids = sorted(i for i, s in worst.items() if s in BAD)
        if name in base_whole:
            (expected if bad_ids else stale).append(name)
            continue
        allowed = base_checks.get(name, set())
        unexpected = [i for i in bad_ids if i not in allowed]
        expected += [f"{name}:{i}" for i in bad_ids if i in allowed]
        stale += [f"{name}:{i}" for i in sorted(allowed) if worst.get(i) == "SUCCESS"]
        if unexpected:
            scored_failed[name] = unexpected

    suite_skipped = {p for p in a.pending_skipped.split(",") if p}
    pending = {}
    pending_failed = {}
    pending_skipped = {}
    for name in pending_names:
        checks = pending_results.get(name)
        if checks is None:
            pending[name] = {"ran": False}
            pending_failed[name] = ["(scenario did not run)"]
            continue
        info = describe(checks)
        info["ran"] = True
        pending[name] = info
        bad = sorted(set(info["failed"]) | set(info["warnings"]))
        if bad:
            pending_failed[name] = bad
            continue
        exercised = any(c.get("status") not in ("SKIPPED", "INFO") for c in checks)
        if name in suite_skipped:
            if exercised:
                pending_failed[name] = [
                    "(listed as skipped by the suite, but the suite exercises it now: "
                    "drop it from the skipped list so it is gated)"
                ]
            else:
                # Explicitly not proof: say why the suite skipped it.
                reasons = sorted({c.get("errorMessage", "") for c in checks if c.get("errorMessage")})
                info["skipped_by_suite"] = True
                pending_skipped[name] = reasons[0] if reasons else "(no reason given)"
        elif not info["counts"].get("SUCCESS"):
            pending_failed[name] = ["(no check reached SUCCESS: a scenario that proves nothing)"]

    required = {}
    required_failed = []
    for pair in [p for p in a.require_success.split(",") if p]:
        scen, check = pair.split(":", 1)
        statuses = [c.get("status") for c in results.get(scen, []) if c.get("id") == check]
        good = "SUCCESS" in statuses and not any(st in BAD for st in statuses)
        required[pair] = {"statuses": sorted(set(statuses)), "success_rows": statuses.count("SUCCESS"), "ok": good}
        if not good:
            required_failed.append(pair)

    totals = {}
    for info in scenarios.values():
        for k, v in info.get("counts", {}).items():
            totals[k] = totals.get(k, 0) + v
    ok = not scored_failed and not stale and not pending_failed and not required_failed
    summary = {
        "leg": a.leg,
        "ok": ok,
        "totals": totals,
        "scored_failed": scored_failed,
        "stale_baseline": stale,
        "expected_failures": expected,
        "pending_failed": pending_failed,
        "pending_skipped": pending_skipped,
        "scenarios": scenarios,
        "pending": pending,
        "required_success": required,
        "required_success_failed": required_failed,
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, sort_keys=True)
        f.write("\n")

    print_table(summary, base_whole, base_checks)
    print(f"\nsummary written to {a.out}")
    return 0 if ok else 1


def print_table(s, base_whole, base_checks):
    cols = ["SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO"]
    rows = [(n, i) for n, i in s["scenarios"].items()]
    rows += [(f"{n} (pending gate)", dict(i, category="pending-gate")) for n, i in s["pending"].items()]
    width = max([len(n) for n, _ in rows] + [8])
    print(f"{'scenario':<{width}}  {'category':<24}" + "".join(f"{c:>9}" for c in cols) + "  verdict")
    print("-" * (width + 26 + 9 * len(cols) + 9))
    for name, info in rows:
        base = name.split(" ")[0]
        if not info.get("ran"):
            verdict = "MISSING"
        elif info.get("skipped_by_suite") and base not in s["pending_failed"]:
            verdict = "SKIPPED (by the suite)"
        elif base in s["scored_failed"] or (base in s["pending_failed"] and "pending" in name):
            verdict = "FAIL"
        elif info["category"] == "scored" and (base in base_whole or base in base_checks) and (
            info.get("failed") or info.get("warnings")
        ):
            verdict = "baselined"
        elif info.get("failed") or info.get("warnings"):
            verdict = "fail (not scored)" if info["category"] != "pending-gate" else "FAIL"
        elif not info.get("counts", {}).get("SUCCESS"):
            verdict = "SKIPPED (nothing passed)"
        else:
            verdict = "ok"
        counts = info.get("counts", {})
        print(
            f"{name:<{width}}  {info['category']:<24}"
            + "".join(f"{counts.get(c, 0):>9}" for c in cols)
            + f"  {verdict}"
        )
    t = s["totals"]
    print("\ntotals (requirements run): " + ", ".join(f"{k} {v}" for k, v in sorted(t.items())))
    if s["expected_failures"]:
        print("\nexpected failures (baseline):")
        for e in s["expected_failures"]:
            print(f"  ~ {e}")
    if s["stale_baseline"]:
        print("\nSTALE baseline entries (now passing: remove them from conformance/baseline.yml):")
        for e in s["stale_baseline"]:
            print(f"  + {e}")
    if s["scored_failed"]:
        print("\nSCORED FAILURES (FAILURE or WARNING not in the baseline):")
        for n, ids in sorted(s["scored_failed"].items()):
            print(f"  x {n}: {', '.join(ids)}")
    if s["pending_skipped"]:
        print("\nSKIPPED BY THE SUITE (pending gates that prove nothing here; covered by our own tests):")
        for n, reason in sorted(s["pending_skipped"].items()):
            print(f"  - {n}: {reason}")
    if s["pending_failed"]:
        print("\nPENDING GATE FAILURES (must have zero FAILURE and zero WARNING):")
        for n, ids in sorted(s["pending_failed"].items()):
            print(f"  x {n}: {', '.join(ids)}")
    if s["required_success"]:
        print("\nrequired SUCCESS checks (vacuous-pass guard):")
        for pair, info in sorted(s["required_success"].items()):
            mark = "ok" if info["ok"] else "MISSING/FAILED"
            print(f"  {'+' if info['ok'] else 'x'} {pair}: {info['success_rows']} SUCCESS row(s) {mark}")
    print("\nRESULT: " + ("PASS" if s["ok"] else "FAIL"))


if __name__ == "__main__":
    sys.exit(main())
