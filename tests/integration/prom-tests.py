#!/usr/bin/python3
"""prom-tests.py: promtool unit tests from real cronguard metrics files.

    prom-tests.py RULES SNAPDIR SPEC OUTDIR

Reads the metrics files SNAPDIR/NAME.prom that the test suite had
`cronguard jobs check / outbox check --metrics-file` write, and the
scenarios in SPEC, and writes OUTDIR/rules.yml (RULES without its
annotations: the firing tests compare labels only) and OUTDIR/test.yml
for `promtool test rules`.

SPEC, one directive a line (# comments):

    scenario NAME [honor]      a test; honor: scraped with honor_labels
    seg SNAP MINUTES [frozen]  SNAP's samples for MINUTES one-minute steps;
                               frozen: the file is not rewritten (its
                               timestamps stand still), else the check
                               runs every minute with the same result
    at TIME ALERT:SEVERITY[:k=v,...] ...
                               at TIME (e.g. 69m) exactly these alerts
                               fire, each rule's others stay silent

Every `at` lists every alert name of RULES: the ones not named must not
fire.  The samples become series as node_exporter's textfile collector
and a default scrape make them: instance="host1:9100", job="node", the
file's own job label renamed exported_job (kept as job with honor).
Timestamps are moved onto the test's clock: the file's check timestamp
is the step's time (or the time it was last written, frozen), and every
other *_timestamp_seconds keeps its distance from it.
"""
import json
import re
import sys

import yaml

INSTANCE = "host1:9100"
SCRAPE_JOB = "node"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')


def parse_labels(text):
    labels, pos = {}, 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError("bad labels: %r" % text)
        labels[m.group(1)] = re.sub(r'\\(.)', lambda e: {
            'n': '\n'}.get(e.group(1), e.group(1)), m.group(2))
        pos = m.end()
    return labels


def read_snapshot(path):
    """[(name, labels, value)] of one metrics file."""
    samples = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError("%s: not a sample: %r" % (path, line))
        samples.append((m.group(1), parse_labels(m.group(3) or ""),
                        float(m.group(4))))
    return samples


def check_time(samples, path):
    for name, _, value in samples:
        if name.endswith("_check_timestamp_seconds"):
            return value
    raise ValueError("%s has no *_check_timestamp_seconds" % path)


def scraped(labels, honor):
    out = dict(labels)
    if "job" in out and not honor:
        out["exported_job"] = out.pop("job")
    out.setdefault("job", SCRAPE_JOB)
    out["instance"] = INSTANCE
    return out


def selector(name, labels):
    esc = lambda v: v.replace("\\", "\\\\").replace('"', '\\"').replace(
        "\n", "\\n")
    return "%s{%s}" % (name, ",".join('%s="%s"' % (k, esc(labels[k]))
                                      for k in sorted(labels)))


def fmt(v):
    return repr(int(v)) if v == int(v) else repr(v)


def build_series(segments, snapdir, honor):
    """input_series for the segments [(snap, minutes, frozen)]."""
    steps = []          # per step: {selector: value}
    last_written = 0.0
    for snap, minutes, frozen in segments:
        path = "%s/%s.prom" % (snapdir, snap)
        samples = read_snapshot(path)
        real = check_time(samples, path)
        start = len(steps) * 60.0
        if not frozen or not steps:
            last_written = start
        for i in range(minutes):
            now = start + i * 60.0
            if not frozen:
                last_written = now
            step = {}
            for name, labels, value in samples:
                if name.endswith("_check_timestamp_seconds"):
                    value = last_written
                elif name.endswith("_timestamp_seconds") and value > 0:
                    value = value - real + (start if not frozen
                                            else last_written)
                step[selector(name, scraped(labels, honor))] = value
            steps.append(step)
    names = sorted({s for step in steps for s in step})
    series = []
    for s in names:
        vals, seen = [], False
        for step in steps:
            if s in step:
                vals.append(fmt(step[s]))
                seen = True
            elif seen and vals[-1] not in ("stale", "_"):
                vals.append("stale")
            else:
                vals.append("_")
        series.append({"series": s, "values": " ".join(vals)})
    return series, len(steps)


def parse_spec(path):
    scenarios = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "scenario":
            scenarios.append({"name": words[1], "honor": "honor" in words[2:],
                              "segments": [], "at": []})
        elif words[0] == "seg":
            scenarios[-1]["segments"].append(
                (words[1], int(words[2]), "frozen" in words[3:]))
        elif words[0] == "at":
            fire = []
            for w in words[2:]:
                parts = w.split(":")
                labels = {"severity": parts[1]}
                for kv in (parts[2].split(",") if len(parts) > 2 else []):
                    k, v = kv.split("=", 1)
                    labels[k] = v
                fire.append((parts[0], labels))
            scenarios[-1]["at"].append((words[1], fire))
        else:
            raise ValueError("%s:%d: unknown directive %s" % (path, n,
                                                              words[0]))
    return scenarios


def main():
    rules_path, snapdir, spec, outdir = sys.argv[1:5]
    rules = yaml.safe_load(open(rules_path, encoding="utf-8"))
    alerts = []
    for g in rules["groups"]:
        for r in g["rules"]:
            r.pop("annotations", None)
            if "alert" in r and r["alert"] not in alerts:
                alerts.append(r["alert"])
    with open(outdir + "/rules.yml", "w", encoding="utf-8") as f:
        yaml.safe_dump(rules, f, sort_keys=False)

    tests = []
    for sc in parse_spec(spec):
        series, nsteps = build_series(sc["segments"], snapdir, sc["honor"])
        checks = []
        for at, fire in sc["at"]:
            for name, _ in fire:
                if name not in alerts:
                    raise ValueError("%s: no alert %s in %s" % (
                        sc["name"], name, rules_path))
            for name in alerts:
                exp = []
                for n, labels in fire:
                    if n != name:
                        continue
                    full = {"instance": INSTANCE}
                    if not sc["honor"] or "job" not in labels:
                        full["job"] = SCRAPE_JOB
                    full.update(labels)
                    exp.append({"exp_labels": full})
                checks.append({"eval_time": at, "alertname": name,
                               "exp_alerts": exp})
        tests.append({"name": sc["name"], "interval": "1m",
                      "input_series": series, "alert_rule_test": checks})
        print("scenario %s: %d steps, %d series, %d checks" % (
            sc["name"], nsteps, len(series), len(checks)))
    with open(outdir + "/test.yml", "w", encoding="utf-8") as f:
        json.dump({"rule_files": ["rules.yml"], "evaluation_interval": "1m",
                   "tests": tests}, f, indent=1)


if __name__ == "__main__":
    main()
