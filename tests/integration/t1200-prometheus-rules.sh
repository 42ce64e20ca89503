#!/bin/sh
# The shipped alert rules (etc/prometheus/cronguard.rules.yml) pass
# `promtool check rules`, and `promtool test rules` on series taken from
# the metrics files that jobs check and outbox check write here against
# the test database in several states: every rule fires where it should
# and stays silent everywhere else (tests/integration/prom-tests.py turns
# the files into promtool's input series, as a node_exporter scrape would
# label them).  Every alert has a summary, a description naming a
# cronguard command and a runbook anchor that is a RUNBOOK subsection of
# cronguard(1) or cronguard-outbox(7).  Mutants of the rules (a wrong
# metric name, a wrong threshold, a dropped for:) fail the tests.
# Every alert fires in at least one scenario.
# Cases: check rules; annotations; jobs snapshots; scheduled jobs;
# outbox snapshots; the derived rule tests; annotations rendered;
# mutants; every alert in a scenario.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
command -v promtool > /dev/null || {
	[ "${CI:-}" = true ] && fail "promtool not installed (Debian package prometheus)"
	echo "SKIP: promtool not installed"; exit 77
}
need_servers
RULES=$CRONGUARD_SRCDIR/etc/prometheus/cronguard.rules.yml
SNAP=$TEST_TMP/snap
GEN=$TEST_TMP/gen
mkdir "$SNAP" "$GEN"

rules_pass()
{
	assert_exit 0 promtool check rules "$RULES"
	assert_grep 'SUCCESS: [0-9]+ rules found' "$OUT"
}
test_expect_success 'promtool check rules passes the shipped rules' rules_pass

# ------------------------------------------------- annotations, runbooks
annotations()
{
	"$LIB_PY" - "$RULES" "$CRONGUARD_SRCDIR/man" <<'PY' || fail "annotations"
import re, sys, yaml
rules, man = sys.argv[1], sys.argv[2]
def runbook(page):
    text = open("%s/%s.in" % (man, page), encoding="utf-8").read()
    m = re.search(r"^\.Sh RUNBOOK\n(.*?)(?=^\.Sh |\Z)", text, re.M | re.S)
    return set(re.findall(r"^\.Ss (\S+)$", m.group(1), re.M)) if m else set()
pages = {"cronguard(1)": runbook("cronguard.1"),
         "cronguard-outbox(7)": runbook("cronguard-outbox.7")}
bad = []
for g in yaml.safe_load(open(rules))["groups"]:
    for r in g["rules"]:
        a, n = r.get("annotations", {}), r["alert"]
        if not a.get("summary"):
            bad.append("%s: no summary" % n)
        if "`cronguard " not in a.get("description", ""):
            bad.append("%s: the description names no cronguard command" % n)
        m = re.fullmatch(r"man:(\S+\(\d\))#(\w+)", a.get("runbook_url", ""))
        if not m or m.group(1) not in pages or m.group(2) != n:
            bad.append("%s: runbook_url %r is not man:PAGE#%s" %
                       (n, a.get("runbook_url"), n))
        elif n not in pages[m.group(1)]:
            bad.append("%s: no .Ss %s under RUNBOOK in %s" % (n, n, m.group(1)))
        if r.get("labels", {}).get("severity") not in ("warning", "critical"):
            bad.append("%s: severity not warning or critical" % n)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
test_expect_success 'every alert: a summary, a description, a RUNBOOK anchor' \
    annotations

# ------------------------------------------------------------- jobs
JOBS="runtime_dir = \"$TEST_TMP\";
jobs = {
  nightly = { command = [ \"true\" ]; expect_every = \"1h\"; };
  broken = { command = [ \"sh\", \"-c\", \"exit 3\" ]; };
  overdue = { command = [ \"true\" ]; expect_every = \"1h\"; grace = \"1m\"; };
  fresh = { command = [ \"true\" ]; expect_every = \"1d\"; };
};"
jobs_snapshots()
{
	write_config "$CONF" "$JOBS"
	assert_exit 0 cg db migrate
	assert_exit 0 cg run nightly
	assert_exit 3 cg run broken
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
    outcome, exit_status) VALUES ('overdue', 'old', 1, NOW(6) - INTERVAL 2 HOUR,
    NOW(6) - INTERVAL 2 HOUR + INTERVAL 5 SECOND, 'success', 0)"
	# nightly OK, broken failed (WARNING), overdue CRITICAL, fresh never ran
	# (WARNING)
	assert_exit 2 cg jobs check --metrics-file "$SNAP/jobs-states.prom"
	assert_grep 'broken WARNING: last run [0-9]+: failure' "$OUT"
	assert_grep 'overdue CRITICAL: last success' "$OUT"
	assert_grep 'fresh WARNING: no successful run' "$OUT"
	# broken fixed, overdue ran: only fresh is left WARNING
	write_config "$CONF" "$(echo "$JOBS" | sed 's/"sh", "-c", "exit 3"/"true"/')"
	assert_exit 0 cg run broken
	assert_exit 0 cg run overdue
	assert_exit 1 cg jobs check --metrics-file "$SNAP/jobs-fixed.prom"
	write_config "$CONF" "$(echo "$JOBS" | sed 's/"sh", "-c", "exit 3"/"true"/')"
	sed -i 's/port = [0-9]*;/port = 1;/' "$CONF"
	assert_exit 3 cg jobs check --metrics-file "$SNAP/jobs-down.prom"
}
test_expect_success 'jobs check snapshots: jobs in every state, fixed, database down' \
    jobs_snapshots

# Scheduled jobs (every 5 minutes, UTC), one state each: failed at
# alert_level critical, failed below alert_after_failures, failed at
# warning, ran twice, missed, late, paused.
SCHED='schedule = "*/5 * * * *"; timezone = "+00:00";'
# slot N: the Nth slot of */5 before now (database clock, UTC).
slot()
{
	mysql_q "SELECT DATE_FORMAT(FROM_UNIXTIME(FLOOR(UNIX_TIMESTAMP(NOW())
	    / 300) * 300 - 300 * $1), '%Y-%m-%d %H:%i:00')"
}
scheduled()
{
	local j
	write_config "$CONF" "runtime_dir = \"$TEST_TMP\";
jobs = {
  crit = { command = [ \"false\" ]; $SCHED grace = \"1d\"; alert_level = \"critical\"; };
  patient = { command = [ \"false\" ]; $SCHED grace = \"1d\"; alert_after_failures = 3; };
  wobbly = { command = [ \"false\" ]; $SCHED grace = \"1d\"; };
  twice = { command = [ \"true\" ]; $SCHED grace = \"1d\"; };
  missed = { command = [ \"true\" ]; $SCHED grace = \"1s\"; };
  late = { command = [ \"true\" ]; $SCHED grace = \"1s\"; };
  paused = { command = [ \"true\" ]; $SCHED grace = \"1d\"; };
};"
	# Keep clear of a slot's first and last seconds.
	while [ "$(mysql_q "SELECT MOD(UNIX_TIMESTAMP(NOW()), 300) BETWEEN 5 AND 250")" != 1 ]; do
		sleep 1
	done
	for j in crit patient wobbly; do
		assert_exit 1 cg run --slot "$(slot 1)" "$j"
	done
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at, finished_at,
    outcome, slot, slot_kind) VALUES
    ('twice', 'a', 1, '$(slot 1)', '$(slot 1)', 'success', '$(slot 1)', 'schedule'),
    ('twice', 'b', 2, '$(slot 1)', '$(slot 1)', 'success', '$(slot 1)', 'schedule'),
    ('twice', 'a', 3, NOW(), NOW(), 'success', '$(slot 0)', 'schedule'),
    ('missed', 'a', 4, '$(slot 1)', '$(slot 1)', 'success', '$(slot 1)', 'schedule'),
    ('late', 'a', 5, NOW(), NOW(), 'success', '$(slot 0)', 'schedule')"
	assert_exit 0 cg jobs pause --reason "t1200" paused
	assert_exit 2 cg jobs check --metrics-file "$SNAP/jobs-schedules.prom"
	cat "$OUT"
	assert_grep 'crit CRITICAL: 1 consecutive failed slot' "$OUT"
	assert_grep 'wobbly WARNING: 1 consecutive failed slot' "$OUT"
	assert_grep 'twice WARNING: ran twice' "$OUT"
	assert_grep 'missed CRITICAL: slot .* missed' "$OUT"
	assert_grep 'late WARNING: slot .* started late' "$OUT"
	if grep -qE 'patient (WARNING|CRITICAL)' "$OUT"; then fail "patient reported below alert_after_failures"; fi
}
test_expect_success 'scheduled jobs snapshot: failed, ran twice, missed, late, paused' \
    scheduled

# ------------------------------------------------------------ outbox
# snap NAME EXIT: outbox check --metrics-file, then an empty outbox again
snap()
{
	assert_exit "$2" cg outbox check --metrics-file "$SNAP/$1.prom"
	mysql_q "DELETE FROM outbox_messages; DELETE FROM cronguard_channels"
}
add()	# add N [STATUS [CHANNEL]]
{
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, status,
	    next_attempt_at) SELECT '${3:-hook}', 't', '{}', '${2:-PENDING}',
	    NOW(6) - INTERVAL 1 MINUTE FROM seq_1_to_$1"
}

outbox_snapshots()
{
	local n f
	write_config "$CONF" "
channels = { hook = { type = \"http\"; url = \"$HTTP_BASE/ok\"; };
             mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"t@example.com\"; }; };"
	snap outbox-ok 0
	add 1 PROCESSING
	mysql_q "UPDATE outbox_messages SET claimed_at = NOW(6) - INTERVAL 6 MINUTE, claim_token = UUID()"
	snap outbox-stale 0
	# the row the issue names: PROCESSING, claimed an hour ago
	add 1
	mysql_q "UPDATE outbox_messages SET status = 'PROCESSING', claim_token = UUID(),
    claimed_at = NOW() - INTERVAL 1 HOUR"
	snap outbox-stuck 2
	add 1 FAILED
	snap outbox-failed 1
	for n in 1 3 6 10; do
		add "$n"
		snap "outbox-due$n" 0
	done
	add 1
	mysql_q "UPDATE outbox_messages SET next_attempt_at = NOW(6) - INTERVAL 10 MINUTE"
	snap outbox-old-warn 1
	add 1
	mysql_q "UPDATE outbox_messages SET next_attempt_at = NOW(6) - INTERVAL 40 MINUTE"
	snap outbox-old-crit 2
	mysql_q "INSERT INTO cronguard_channels (name, circuit_failures, circuit_open_until)
    VALUES ('hook', 5, NOW(6) + INTERVAL 1 HOUR)"
	snap outbox-circuit 1
	add 2 PENDING nosuch
	snap outbox-unknown 1
	# a FAILED head and a PENDING row behind it on the same key
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload, status,
    ordering_key, next_attempt_at) VALUES
    ('hook', 't', '{}', 'FAILED', 'order:1', NOW(6) - INTERVAL 1 MINUTE),
    ('hook', 't', '{}', 'PENDING', 'order:1', NOW(6) - INTERVAL 1 MINUTE)"
	snap outbox-blocked 1
	add 1 FAILED
	mysql_q "UPDATE outbox_messages SET last_error = 'expired at 2026-01-01 00:00:00'"
	snap outbox-expired 1
	assert_exit 0 cg outbox pause --reason "t1200" hook
	assert_exit 0 cg outbox check --metrics-file "$SNAP/outbox-paused.prom"
	assert_grep 'cronguard_outbox_channel_paused\{channel="hook"\} [0-9]+$' "$SNAP/outbox-paused.prom"
	assert_exit 0 cg outbox resume hook
	sed -i 's/port = [0-9]*;/port = 1;/' "$CONF"
	assert_exit 3 cg outbox check --metrics-file "$SNAP/outbox-down.prom"
	for f in "$SNAP"/*.prom; do echo "--- $f"; cat "$f"; done > "$TEST_TMP/snapshots.txt"
}
test_expect_success 'outbox check snapshots: every state, paused, database down' \
    outbox_snapshots

# ---------------------------------------------------------- scenarios
# Alerts as NAME:SEVERITY[:LABEL=VALUE,...]; see prom-tests.py.
cat > "$TEST_TMP/spec" <<'SPEC'
scenario jobs-states
seg jobs-states 70
at 30m CronguardJobFailed:warning:exported_job=broken CronguardJobCritical:critical:exported_job=overdue
at 69m CronguardJobFailed:warning:exported_job=broken CronguardJobCritical:critical:exported_job=overdue CronguardJobWarning:warning:exported_job=fresh

# scraped with honor_labels: true, the file's job label stays job
scenario jobs-states-honor-labels honor
seg jobs-states 5
at 4m CronguardJobFailed:warning:job=broken CronguardJobCritical:critical:job=overdue

scenario jobs-fixed
seg jobs-states 20
seg jobs-fixed 30
at 49m

scenario jobs-database-down
seg jobs-fixed 10
seg jobs-down 10
at 12m
at 19m CronguardJobsDown:critical

scenario jobs-check-stopped
seg jobs-fixed 5
seg jobs-fixed 25 frozen
at 15m
at 29m CronguardJobsMetricsStale:warning

# schedules: failed at the job's alert_level (patient: below
# alert_after_failures, silent), ran twice, missed, late; the generic
# alerts stay silent for them; paused: a day later
scenario jobs-schedules
seg jobs-schedules 70
at 9m CronguardJobFailed:critical:exported_job=crit CronguardJobFailed:warning:exported_job=wobbly CronguardJobRanTwice:warning:exported_job=twice CronguardJobSlotMissed:critical:exported_job=missed CronguardJobSlotLate:warning:exported_job=late
at 69m CronguardJobFailed:critical:exported_job=crit CronguardJobFailed:warning:exported_job=wobbly CronguardJobRanTwice:warning:exported_job=twice CronguardJobSlotMissed:critical:exported_job=missed CronguardJobSlotLate:warning:exported_job=late

scenario jobs-paused-a-day
seg jobs-schedules 1450
at 1435m CronguardJobFailed:critical:exported_job=crit CronguardJobFailed:warning:exported_job=wobbly CronguardJobRanTwice:warning:exported_job=twice CronguardJobSlotMissed:critical:exported_job=missed CronguardJobSlotLate:warning:exported_job=late
at 1449m CronguardJobFailed:critical:exported_job=crit CronguardJobFailed:warning:exported_job=wobbly CronguardJobRanTwice:warning:exported_job=twice CronguardJobSlotMissed:critical:exported_job=missed CronguardJobSlotLate:warning:exported_job=late CronguardJobPausedTooLong:warning:exported_job=paused

scenario outbox-blocked
seg outbox-ok 2
seg outbox-blocked 20
at 10m CronguardOutboxFailed:warning:status=failed
at 21m CronguardOutboxFailed:warning:status=failed CronguardOutboxBlocked:warning

scenario outbox-expired
seg outbox-expired 5
at 4m CronguardOutboxFailed:warning:status=failed CronguardOutboxExpired:warning

scenario outbox-channel-paused
seg outbox-ok 2
seg outbox-paused 70
at 30m
at 71m CronguardOutboxChannelPaused:warning:channel=hook

scenario outbox-ok
seg outbox-ok 60
at 59m

scenario outbox-stale
seg outbox-ok 2
seg outbox-stale 10
at 5m
at 11m CronguardOutboxStale:warning

scenario outbox-stuck
seg outbox-ok 2
seg outbox-stuck 10
at 2m CronguardOutboxStuck:critical
at 11m CronguardOutboxStuck:critical

scenario outbox-failed
seg outbox-failed 5
at 4m CronguardOutboxFailed:warning:status=failed

scenario outbox-backlog-growing
seg outbox-ok 5
seg outbox-due1 10
seg outbox-due3 10
seg outbox-due6 10
seg outbox-due10 10
at 30m
at 44m CronguardOutboxBacklogGrowing:warning

scenario outbox-backlog-steady
seg outbox-due6 45
at 44m

scenario outbox-backlog-draining
seg outbox-due10 10
seg outbox-due6 10
seg outbox-due3 10
seg outbox-due1 15
at 44m

scenario outbox-oldest-due
seg outbox-ok 2
seg outbox-old-warn 10
seg outbox-old-crit 5
at 5m
at 11m CronguardOutboxOldestDueTooOld:warning
at 16m CronguardOutboxOldestDueTooOld:critical

scenario outbox-circuit-open
seg outbox-ok 2
seg outbox-circuit 10
at 5m
at 11m CronguardOutboxCircuitOpen:warning:channel=hook

scenario outbox-unknown-channel
seg outbox-unknown 20
at 10m
at 19m CronguardOutboxUnknownChannel:warning

scenario outbox-database-down
seg outbox-stuck 5
seg outbox-down 10
at 4m CronguardOutboxStuck:critical
at 14m CronguardOutboxDown:critical

scenario outbox-check-stopped
seg outbox-ok 5
seg outbox-ok 25 frozen
at 15m
at 29m CronguardOutboxMetricsStale:warning
SPEC

rule_tests()
{
	assert_exit 0 "$LIB_PY" "$CRONGUARD_SRCDIR/tests/integration/prom-tests.py" \
	    "$RULES" "$SNAP" "$TEST_TMP/spec" "$GEN"
	cat "$OUT"
	# The generated series come from the files: spot-check one of them.
	grep -q 'cronguard_outbox_stuck{instance=\\"host1:9100\\",job=\\"node\\"}' "$GEN/test.yml" ||
	    fail "no stuck series generated"
	if ! promtool test rules "$GEN/test.yml" > "$OUT" 2>&1; then
		cat "$OUT"; cat "$TEST_TMP/snapshots.txt"
		fail "promtool test rules failed on the derived series"
	fi
	assert_grep SUCCESS "$OUT"
}
test_expect_success 'promtool test rules on series from the snapshots' \
    rule_tests

# With the annotations: two alerts rendered from the real labels.
rendered()
{
	cat > "$GEN/annotations.yml" <<EOF
rule_files: [ "$RULES" ]
tests:
  - interval: 1m
    input_series:
      - series: 'cronguard_outbox_stuck{instance="host1:9100",job="node"}'
        values: '$(sed -n 's/^cronguard_outbox_stuck //p' "$SNAP/outbox-stuck.prom")'
      - series: 'cronguard_job_last_run_failed{exported_job="broken",instance="host1:9100",job="node"}'
        values: '$(sed -n 's/^cronguard_job_last_run_failed{job="broken"} //p' "$SNAP/jobs-states.prom")'
      - series: 'cronguard_job_status{exported_job="broken",instance="host1:9100",job="node"}'
        values: '$(sed -n 's/^cronguard_job_status{job="broken"} //p' "$SNAP/jobs-states.prom")'
    alert_rule_test:
      - eval_time: 0m
        alertname: CronguardOutboxStuck
        exp_alerts:
          - exp_labels: { severity: critical, instance: "host1:9100", job: node }
            exp_annotations:
              summary: "cronguard outbox has rows stuck in PROCESSING"
              description: "1 outbox rows have been PROCESSING longer than outbox.watchdog: no dispatcher is recovering them, so outbox dispatch is not running anywhere. \`cronguard outbox list --status PROCESSING\` shows them and who claimed them."
              runbook_url: "man:cronguard-outbox(7)#CronguardOutboxStuck"
      - eval_time: 0m
        alertname: CronguardJobFailed
        exp_alerts:
          - exp_labels: { severity: warning, instance: "host1:9100", job: node, exported_job: broken }
            exp_annotations:
              summary: "cronguard job broken failed on host1:9100"
              description: "The newest finished run of broken did not succeed (failure, timeout, incident) and no later run has. \`cronguard jobs runs broken\` lists the runs, \`cronguard jobs show RUN_ID\` the failed one with its output; \`cronguard jobs ack\` acknowledges a slot."
              runbook_url: "man:cronguard(1)#CronguardJobFailed"
EOF
	if ! promtool test rules "$GEN/annotations.yml" > "$OUT" 2>&1; then
		cat "$OUT"; fail "annotations rendered wrong"
	fi
}
test_expect_success 'two alerts'"'"' annotations rendered from the real labels' \
    rendered

# ------------------------------------------------------------ mutants
# mutant NAME SED: the derived tests fail on the rules changed by SED.
mutant()
{
	"$LIB_PY" - "$RULES" "$2" "$GEN/mutant-src.yml" <<-'PY'
	import re, sys
	text = open(sys.argv[1]).read()
	old, new = sys.argv[2].split("=>")
	assert old in text, old
	open(sys.argv[3], "w").write(text.replace(old, new, 1))
	PY
	mkdir -p "$GEN/$1"
	"$LIB_PY" "$CRONGUARD_SRCDIR/tests/integration/prom-tests.py" \
	    "$GEN/mutant-src.yml" "$SNAP" "$TEST_TMP/spec" "$GEN/$1" > /dev/null
	if promtool test rules "$GEN/$1/test.yml" > "$GEN/$1/out" 2>&1; then
		fail "mutant $1 ($2) passes the rule tests"
	fi
	echo "mutant $1 fails, as it should: $(grep -c 'alertname:' "$GEN/$1/out") failed checks"
}
mutants()
{
	mutant metric-name 'cronguard_outbox_stuck > 0=>cronguard_outbox_stuck_rows > 0'
	mutant job-metric-name 'cronguard_job_last_run_failed == 1
          and on (instance, job, exported_job) cronguard_job_status > 0
          unless=>cronguard_job_last_failed == 1
          and on (instance, job, exported_job) cronguard_job_status > 0
          unless'
	mutant threshold 'oldest_due_age_seconds > 1800=>oldest_due_age_seconds > 18000'
	mutant stale-threshold 'cronguard_jobs_check_timestamp_seconds > 900=>cronguard_jobs_check_timestamp_seconds > 9000'
	mutant for 'cronguard_outbox_due[30m]) > 0
        for: 30m=>cronguard_outbox_due[30m]) > 0
        for: 60m'
	mutant matching 'unless cronguard_outbox_stuck > 0=>unless cronguard_outbox_stale > 1'
	mutant alert-level 'cronguard_job_alert_level == 2)=>cronguard_job_alert_level == 3)'
	mutant slot-missed 'expr: cronguard_job_slot_missed > 0=>expr: cronguard_job_slot_missed > 1'
	mutant paused-for 'cronguard_job_paused > 0
        for: 24h=>cronguard_job_paused > 0
        for: 25h'
	mutant label-matching 'unless on (instance, job, exported_job) (cronguard_job_last_run_failed == 1)=>unless on (instance) (cronguard_job_last_run_failed == 1)'
}
test_expect_success 'mutants of the rules fail the derived tests' mutants

# ---------------------------------------------------------- coverage
# Every alert of the rules fires in at least one scenario above.
coverage()
{
	local a
	for a in $(sed -n 's/^ *- alert: //p' "$RULES" | sort -u); do
		grep -q "^at .* $a:" "$TEST_TMP/spec" || fail "$a fires in no scenario of $TEST_NAME"
	done
}
test_expect_success 'every alert fires in at least one scenario' coverage

test_done
