#!/bin/sh
# README tested literally (3 of 3): every "$ " example of the sections
# "Use from cron" and "The outbox" is run (or explicitly skipped, with the
# reason) against the test servers, and its exit status and the shape of
# its output compared with what the README shows: the exact text where the
# README's is not data (run's pass-through, retry/cancel/purge counts), the
# table headers, the key=value names of log lines, the field names of
# jobs show, the Nagios line with numbers as N, the JSON keys.  An example
# this test does not know fails it: a new README example needs a case here.
# And Monitoring's `status --format json | jq` sample, in shape.
# Cases: setup; every example as the README shows it.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers

setup()
{
	mkdir "$TEST_TMP/bin"
	ln -s "$CRONGUARD_BIN" "$TEST_TMP/bin/cronguard"
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
outbox = { watchdog = \"15m\"; lease = \"5m\"; };
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; }; };
jobs = { leave-accrual = { command = [ \"$TEST_TMP/job\" ]; };
  nightly = { command = [ \"/bin/true\" ]; schedule = \"30 1 * * *\"; }; };"
	printf '#!/bin/sh\nexit 0\n' > "$TEST_TMP/job"
	chmod 755 "$TEST_TMP/job"
	assert_exit 0 cg db migrate
}
test_expect_success 'setup: two jobs, an HTTP channel, db migrate' setup

examples()
{
	export TEST_TMP TEST_DB CONF CRONGUARD_BIN CRONGUARD_SRCDIR
	PATH=$TEST_TMP/bin:$PATH CRONGUARD_CONFIG=$CONF "$LIB_PY" - <<'PY' || fail "a README example differs"
import datetime, json, os, re, subprocess, sys, threading

env = os.environ
tmp, top = env["TEST_TMP"], env["CRONGUARD_SRCDIR"]

def sql(q):
    return subprocess.run(
        ["mariadb", "--no-defaults", "--protocol=tcp",
         "-h", env["CRONGUARD_TEST_DB_HOST"], "-P", env["CRONGUARD_TEST_DB_PORT"],
         "-u", env["CRONGUARD_TEST_DB_USER"], "-N", "-B", "-e", q, env["TEST_DB"]],
        env=dict(env, MYSQL_PWD=env.get("CRONGUARD_TEST_DB_PASSWORD", "")),
        check=True, capture_output=True, text=True).stdout

def sh(cmd):
    p = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr

def job(script):
    with open(tmp + "/job", "w") as f:
        f.write("#!/bin/sh\n" + script + "\n")

text = open(top + "/README.md", encoding="utf-8").read()
examples = []
for sec in ("Use from cron", "The outbox"):
    body = text.split("\n## %s\n" % sec, 1)[1].split("\n## ", 1)[0]
    for m in re.finditer(r"^```[^\n]*\n(.*?)^```$", body, re.S | re.M):
        cur = None
        for line in m.group(1).split("\n"):
            if line.startswith("$ "):
                cmd, _, comment = line[2:].partition("  #")
                cur = {"cmd": cmd.strip(), "comment": comment.strip(),
                       "out": [], "sec": sec}
                examples.append(cur)
            elif cur is not None and line != "":
                cur["out"].append(line)

bad = []
def check(ok, ex, msg):
    print(("ok: " if ok else "FAIL: ") + ex["cmd"] + (": " + msg if msg else ""))
    if not ok:
        bad.append(ex["cmd"])

def ws(s):
    return re.sub(r"\s+", " ", s.strip())

def shape(s):
    s = re.sub(r"\d{4}-\d\d-\d\d[T ][\d:.]+Z?", "T", s)
    s = re.sub(r"\d+(\.\d+)?", "N", s)
    return ws(s)

def logkeys(line):
    return [k for k in re.findall(r"(?:^| )([a-z_]+)=", line)]

def host(line):
    return re.sub(r"^\[host [AB]\] ", "", line)

seen = set()
for ex in examples:
    cmd, want = ex["cmd"], ex["out"]
    key = (cmd, ex["comment"])
    if key in seen:
        continue
    seen.add(key)
    if cmd.startswith("mariadb ") or "command: mariadb" in ex["comment"]:
        print("skip: %s (scripts/demo's fenced writer: t0990)" % cmd)
        continue
    if cmd.startswith('cronguard run leave-accrual; echo "exit $?"'):
        if "succeeds" in ex["comment"]:
            job("exit 0")
        else:
            # The README's job output, then its status.
            outs = [l for l in want if not l.startswith("exit ") and
                    not l.startswith("ts=")]
            job("\n".join("echo '%s'%s" % (l, " >&2" if l.startswith("ERROR") else "")
                          for l in outs) + "\nexit 1")
        rc, out, err = sh(cmd + " 2>&1")
        # Log lines by their shape (timestamps and numbers vary).
        check([shape(l) for l in out.rstrip("\n").split("\n")] ==
              [shape(l) for l in want], ex, "got %r, README %r" % (out, want))
        continue
    if cmd.startswith("cronguard -v exec --lock demo"):
        # Two hosts: each its own runtime_dir (on one host the local
        # flock would stop the second before the database lock).
        res = {}
        for n in (0, 1):
            c = open(env["CONF"]).read().replace(
                'runtime_dir = "%s";' % tmp, 'runtime_dir = "%s/host%d";' % (tmp, n))
            os.makedirs("%s/host%d" % (tmp, n), exist_ok=True)
            open("%s/host%d.conf" % (tmp, n), "w").write(c)
            os.chmod("%s/host%d.conf" % (tmp, n), 0o600)
        def one(n):
            res[n] = sh("CRONGUARD_CONFIG=%s/host%d.conf %s 2>&1" % (tmp, n, cmd))
        ts = [threading.Thread(target=one, args=(n,)) for n in (0, 1)]
        for t in ts: t.start()
        for t in ts: t.join()
        got = sorted(res[0][1].split("\n") + res[1][1].split("\n"))
        ok = res[0][0] == 0 and res[1][0] == 0
        for w in (host(l) for l in want):
            if "event=" in w:
                ev = re.search(r"event=(\S+)", w).group(1)
                m = [g for g in got if "event=" + ev + " " in g]
                ok = ok and bool(m) and logkeys(m[0]) == logkeys(w)
                if not ok:
                    check(False, ex, "%s: got %r, README keys %r" % (ev, m, logkeys(w)))
                    break
            else:
                ok = ok and w in got
        if ok:
            check(True, ex, "")
        continue
    if cmd in ("cronguard locks", "cronguard jobs list",
               "cronguard jobs runs leave-accrual", "cronguard outbox list"):
        if cmd == "cronguard outbox list":
            sql("INSERT INTO outbox_messages (channel, event_type, payload) "
                "VALUES ('hook', 'order.created', '{}')")
        rc, out, err = sh(cmd)
        check(rc == 0 and ws(out.split("\n")[0]) == ws(want[0]), ex,
              "exit %d, header %r, README %r" % (rc, out.split("\n")[0], want[0]))
        continue
    if re.match(r"cronguard jobs show \d+$", cmd):
        rid = sql("SELECT MAX(id) FROM cronguard_runs").strip()
        rc, out, err = sh("cronguard jobs show " + rid)
        fields = lambda ls: [l.split(":", 1)[0] for l in ls if re.match(r"^[a-z_]+:", l)]
        check(rc == 0 and fields(out.split("\n")) == fields(want), ex,
              "fields %r, README %r" % (fields(out.split("\n")), fields(want)))
        continue
    if cmd == "cronguard -v outbox dispatch":
        sql("INSERT INTO outbox_messages (channel, event_type, payload) "
            "VALUES ('hook', 'order.created', '{}')")
        rc, out, err = sh(cmd)
        line = [l for l in err.split("\n") if "event=outbox_dispatched" in l]
        w = logkeys(want[0])
        ok = rc == 0 and line and [k for k in logkeys(line[0]) if k in w] == w
        check(ok, ex, "exit %d, %r, README keys %r" % (rc, line, w))
        continue
    m = re.match(r"cronguard outbox (retry|cancel --reason '[^']*'|purge) (\d+)$", cmd)
    if m:
        rid = int(m.group(2))
        n = int(sql("SELECT COUNT(*) FROM outbox_messages").strip())
        for _ in range(n, rid):
            sql("INSERT INTO outbox_messages (channel, event_type, payload) "
                "VALUES ('nowhere', 'order.created', '{}')")
        if m.group(1) == "retry":
            sql("UPDATE outbox_messages SET status = 'PENDING', attempts = 1, "
                "next_attempt_at = NOW(6) + INTERVAL 1 HOUR WHERE id = %d" % rid)
        rc, out, err = sh(cmd)
        check(rc == 0 and out.rstrip("\n").split("\n") == want, ex,
              "exit %d, got %r, README %r" % (rc, out, want))
        continue
    if cmd == "cronguard outbox check":
        sql("DELETE FROM outbox_messages")
        sql("INSERT INTO outbox_messages (channel, event_type, payload, status, "
            "claim_token, claimed_by, claimed_at) VALUES ('hook', 'x', '{}', "
            "'PROCESSING', UUID(), 'gone:1', NOW(6) - INTERVAL 1 HOUR)")
        rc, out, err = sh(cmd)
        check(rc == 2 and shape(out) == shape(want[0]), ex,
              "exit %d, %r, README %r" % (rc, out, want[0]))
        continue
    if cmd == "cronguard outbox check --format json":
        sh("cronguard outbox dispatch")
        sh("cronguard outbox dispatch")
        rc, out, err = sh(cmd)
        try:
            got, readme = json.loads(out), json.loads(want[0])
            ok = rc == 0 and list(got) == list(readme) and got["status"] == readme["status"]
        except ValueError as e:
            ok, got = False, str(e)
        check(ok, ex, "exit %d, %r, README %r" % (rc, out, want[0]))
        continue
    m = re.match(r"cronguard jobs crontab --user (\S+) > (\S+)$", cmd)
    if m:
        rc, out, err = sh("cronguard jobs crontab --user %s > %s/crontab"
                          % (m.group(1), tmp))
        lines = [ws(l) for l in open(tmp + "/crontab").read().split("\n")]
        # The README's cron line shape: the schedule, the user, the run
        # (with -c FILE, as this test's configuration is not the default).
        ok = any(l.startswith("30 1 * * * %s cronguard " % m.group(1)) and
                 l.endswith(" run nightly") for l in lines)
        check(rc == 0 and ok, ex, "exit %d, %r, want '30 1 * * * %s ... "
              "cronguard run nightly'" % (rc, lines, m.group(1)))
        continue
    if cmd.startswith("cronguard schedule next "):
        # The instants move with the date: as many lines as the README
        # shows, each 18:00 on the last Friday of its month in Berlin.
        rc, out, err = sh(cmd)
        got = out.split()
        ok = rc == 0 and len(got) == len(want)
        for t in got if ok else []:
            d = datetime.datetime.fromisoformat(t)
            ok = ok and (d.hour, d.minute, d.weekday()) == (18, 0, 4) and \
                (d + datetime.timedelta(days=7)).month != d.month and \
                t[-6:] in ("+01:00", "+02:00")
        check(ok, ex, "exit %d, %r, README %r" % (rc, got, want))
        continue
    check(False, ex, "an example this test does not know: add a case")
# Monitoring's status sample: the jq line of its sh block, run, and each
# output line compared in shape with the README's "# [...]" lines: a job
# name, a verdict, at most as many cell states as --slots asks (a job
# without a schedule has a cell per run), each in words.
mon = text.split("\n## Monitoring\n", 1)[1].split("\n## ", 1)[0]
lines = mon.split("\n")
cmds = [i for i, l in enumerate(lines) if l.startswith("cronguard status --format json")]
if len(cmds) != 1:
    bad.append("the status sample")
    print("FAIL: Monitoring: %d status --format json samples, this test knows one" % len(cmds))
else:
    i = cmds[0]
    ex = {"cmd": lines[i]}
    want = []
    for l in lines[i + 1:]:
        if not l.startswith("# ["):
            break
        want.append(json.loads(l[2:]))
    slots = int(re.search(r"--slots (\d+)", lines[i]).group(1))
    rc, out, err = sh(lines[i])
    got = [json.loads(l) for l in out.split("\n") if l]
    def ok_shape(v):
        return (isinstance(v, list) and len(v) == 3 and isinstance(v[0], str)
                and v[1] in ("OK", "WARNING", "CRITICAL", "UNKNOWN")
                and 0 < len(v[2]) <= slots
                and all(re.match(r"^[a-z][a-z_ ]*$", c) for c in v[2]))
    check(rc == 0 and len(want) >= 1 and got and all(map(ok_shape, want)) and
          all(map(ok_shape, got)), ex,
          "exit %d, got %r, README %r" % (rc, got, want))
print("%d examples, %d failed" % (len(seen), len(bad)))
sys.exit(1 if bad else 0)
PY
}
test_expect_success 'every "$ " example runs as the README shows it' examples

test_done
