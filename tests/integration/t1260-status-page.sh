#!/bin/sh
# The status page (cronguard(1), status): jobs with successes, a failure
# whose output is hostile (<script>, ESC bytes), a missed slot, a paused job,
# a running one and one without a schedule; an outbox with pending, failed
# and a paused channel and an hour of attempts.  The HTML carries every state
# in text and symbol, escapes what the database holds, is written atomically
# 0640, renders in headless Chromium (DOM dump, screenshots at 1280x900 and
# phone width, build/t1260-status-page*.png, and the page beside them) with no script and nothing fetched; --format
# json says the same; slots acknowledged with jobs ack are shown apart;
# a database that cannot be reached gives a page that
# says so and exit 69.
# Needs the MariaDB test server; Chromium (Debian's chromium) for the
# rendering case (a skip outside CI without it); nginx, curl and openssl
# for the serving case (a skip without them).
# Cases: setup; the page; escaping; json; chromium; nginx; acknowledged;
# database unreachable; bad options.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

PAGE=$TEST_TMP/www/index.html
ESC=$(printf '\033')
test_ci_prereq CHROMIUM
test_lazy_prereq CHROMIUM '[ -x /usr/bin/chromium ]'
test_lazy_prereq NGINX '[ -x /usr/sbin/nginx ] && command -v curl && command -v openssl'

conf()
{
	write_config "$CONF" "runtime_dir = \"$TEST_TMP/run\";
channels = {
  mail = { type = \"smtp\"; url = \"$SMTP_URL\"; from = \"a@$MAIL_DOMAIN\";
    daily_quota = 500; rate = 5.0; };
  hook = { type = \"http\"; url = \"$HTTP_BASE/hook\"; };
};
jobs = {
  nightly-report = { command = [ \"true\" ]; schedule = \"* * * * *\";
    timezone = \"Europe/Berlin\"; grace = \"90s\"; };
  import-orders = { command = [ \"true\" ]; schedule = \"* * * * *\";
    timezone = \"UTC\"; grace = \"90s\"; };
  sync-ledger = { command = [ \"true\" ]; schedule = \"* * * * *\";
    timezone = \"UTC\"; grace = \"90s\"; };
  rotate-keys = { command = [ \"true\" ]; schedule = \"* * * * *\";
    timezone = \"UTC\"; grace = \"90s\"; };
  reindex = { command = [ \"true\" ]; schedule = \"* * * * *\";
    timezone = \"UTC\"; grace = \"90s\"; };
  cleanup = { command = [ \"true\" ]; expect_every = \"1h\"; };
};"
}
mkdir -p "$TEST_TMP/run" "$TEST_TMP/www"

. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/slot-lib.sh"

# run_at N OUTCOME JOB [HOST [EXIT [OUTPUT]]]: a run of slot N (minutes ago)
run_at()
{
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, exit_status, slot, slot_kind, output,
	    output_bytes) VALUES ('$3', '${4:-web1}', 1, '$(slot "$1")' +
	    INTERVAL 2 SECOND, '$(slot "$1")' + INTERVAL 5 SECOND, '$2',
	    ${5:-0}, '$(slot "$1")', 'schedule', ${6:-NULL},
	    LENGTH(${6:-NULL}))"
}

# The runs, relative to the current minute: laid again by the cases that
# look at slot positions, so that a minute ending between cases moves
# nothing under them.
runs()
{
	early_in_minute
	mysql_q "DELETE FROM cronguard_runs"
	for n in 1 2 3 4 5 6 7 8; do
		run_at "$n" success nightly-report
	done
	for n in 3 4 5 6; do
		run_at "$n" success import-orders
	done
	# A failure whose output is hostile; a host name too.
	run_at 2 failure import-orders \
	    '<img src=x onerror=alert(2)>' 1 \
	    "CONCAT('step 3 of 4\\n<script>alert(1)</script>\\n', CHAR(27),
	    '[31mred', CHAR(27), '[0m \"quoted\" & ''single''')"
	# sync-ledger: a success, then nothing: missed slots.
	run_at 7 success sync-ledger
	# rotate-keys: ran, then paused ten minutes ago.
	for n in 14 13 12 11; do
		run_at "$n" success rotate-keys
	done
	# reindex: running now.
	run_at 3 success reindex
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    outcome, slot, slot_kind) VALUES ('reindex', 'web2', 7,
	    '$(slot 0)', 'running', '$(slot 0)', 'schedule')"
	mysql_q "INSERT INTO cronguard_runs (job, host, pid, started_at,
	    finished_at, outcome, exit_status) VALUES ('cleanup', 'web1', 1,
	    NOW(6) - INTERVAL 20 MINUTE, NOW(6) - INTERVAL 19 MINUTE,
	    'success', 0)"
}

setup()
{
	conf
	assert_exit 0 cg db migrate
	runs
	mysql_q "INSERT INTO cronguard_job_pauses (job, paused_at, paused_by,
	    reason) VALUES ('rotate-keys', NOW(6) - INTERVAL 10 MINUTE,
	    'kim@ops1:42', 'HSM swap <b>bold</b> \"q\"')"
	# The outbox: pending mail, a failed row with a hostile error, a
	# paused hook, attempts in the last hours.
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    VALUES ('mail', 'a', '{}'), ('mail', 'a', '{}'), ('hook', 'b', '{}')"
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload,
	    status, last_error) VALUES ('mail', 'a', '{}', 'FAILED',
	    '550 <script>alert(3)</script>')"
	mysql_q "INSERT INTO outbox_attempts (outbox_id, attempt, started_at,
	    duration_ms, outcome, dispatcher, claim_token)
	    SELECT m.id, 1, NOW(6) - INTERVAL h.h HOUR, 10, o.o, 'd:1', 'x'
	    FROM outbox_messages m
	    JOIN (SELECT 0 h UNION SELECT 1 UNION SELECT 3 UNION SELECT 7) h
	    JOIN (SELECT 'SENT' o UNION SELECT 'RETRY' UNION SELECT 'FAILED') o
	    WHERE m.channel = 'mail'"
	assert_exit 0 cg outbox pause hook --reason 'vendor <i>outage</i>'
}
test_expect_success SERVERS 'setup: runs, a pause, outbox rows' setup

page()
{
	early_in_minute
	assert_exit 0 cg status --html "$PAGE"
	[ -s "$PAGE" ] || fail "no page"
	assert_eq 640 "$(stat -c %a "$PAGE")" "page mode"
	ls "$TEST_TMP/www" > "$OUT"
	assert_eq index.html "$(cat "$OUT")" "only the page is left"
	for j in nightly-report import-orders sync-ledger rotate-keys \
	    reindex cleanup mail hook; do
		grep -q "<b>$j</b>" "$PAGE" || fail "no row for $j"
	done
	# Every state in a cell's title (its word first: colour and
	# symbol follow from it), the legend aside.
	for s in success failed missed running paused; do
		grep -q "<td title=\"$s " "$PAGE" || fail "no $s cell"
	done
	assert_grep 'by the database clock' "$PAGE"
	assert_grep 'Generated at <time>[0-9-]{10} [0-9:]{8} UTC</time>' "$PAGE"
	assert_grep '<span class="v v2">CRITICAL</span>' "$PAGE"
	assert_grep 'paused by kim@ops1:42' "$PAGE"
	assert_grep '<svg class=hist' "$PAGE"
	assert_grep 'vendor &lt;i&gt;outage&lt;/i&gt;' "$PAGE"
	assert_grep '<details id="r[0-9]+"><summary>run [0-9]+ failure, exit 1' "$PAGE"
	# Nothing from elsewhere: no script, no element that loads, no
	# link but to the page itself, no URL in the style.
	"$LIB_PY" - "$PAGE" <<'PY' || fail "the page names something outside itself"
import html.parser, sys
bad = []
class P(html.parser.HTMLParser):
    def handle_starttag(self, tag, attrs):
        if tag in ("script", "img", "link", "iframe", "object", "embed",
                   "base", "form", "audio", "video", "source", "use"):
            bad.append(tag)
        for k, v in attrs:
            if k in ("src", "srcset", "action", "xlink:href", "background") or \
               k.startswith("on") or (k == "href" and not (v or "").startswith("#")):
                bad.append((tag, k, v))
    def handle_data(self, d):
        if self.lasttag == "style" and ("url(" in d or "@import" in d):
            bad.append("style url")
P().feed(open(sys.argv[1], encoding="utf-8").read())
assert not bad, bad
PY
}
test_expect_success SERVERS 'the page shows every job, channel and state' page

escaped()
{
	assert_grep '&lt;script&gt;alert\(1\)&lt;/script&gt;' "$PAGE"
	assert_grep '&lt;img src=x onerror=alert\(2\)&gt;' "$PAGE"
	assert_grep '550 &lt;script&gt;alert\(3\)&lt;/script&gt;|HSM swap &lt;b&gt;bold&lt;/b&gt; &quot;q&quot;' "$PAGE"
	assert_grep 'HSM swap &lt;b&gt;bold&lt;/b&gt; &quot;q&quot;' "$PAGE"
	assert_grep '&quot;quoted&quot; &amp; &#39;single&#39;' "$PAGE"
	# ESC shown as its Control Pictures sign, never sent raw.
	assert_grep "$(printf '\342\220\233')\\[31mred" "$PAGE"
	if grep -q "$ESC" "$PAGE"; then fail "a raw ESC byte in the page"; fi
	if grep -qE '<script>alert|<img src=x|<b>bold|<i>outage' "$PAGE"; then
		fail "raw hostile text in the page"
	fi
}
test_expect_success SERVERS 'database values are escaped' escaped

json()
{
	runs
	assert_exit 0 cg status --format json --slots 10
	"$LIB_PY" - "$OUT" <<'PY' || fail "json: $(cat "$OUT")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["clock"] == "database" and j["error"] is None, j
jobs = {x["job"]: x for x in j["jobs"]}
assert len(jobs) == 6, jobs.keys()
states = lambda n: [c["state"] for c in jobs[n]["cells"]]
assert len(states("nightly-report")) == 10, states("nightly-report")
assert "failed" in states("import-orders"), states("import-orders")
assert "missed" in states("sync-ledger"), states("sync-ledger")
assert states("reindex")[-1] == "running", states("reindex")
assert "paused" in states("rotate-keys"), states("rotate-keys")
assert jobs["rotate-keys"]["paused"]["reason"].startswith("HSM swap"), jobs
assert jobs["sync-ledger"]["status"] == "CRITICAL", jobs["sync-ledger"]
assert jobs["nightly-report"]["timezone"] == "Europe/Berlin"
assert jobs["nightly-report"]["next_slot"].endswith("+01:00")
ch = {c["channel"]: c for c in j["outbox"]["channels"]}
assert ch["mail"]["pending"] == 2 and ch["mail"]["failed"] == 1, ch
assert ch["hook"]["paused"]["reason"] == "vendor <i>outage</i>", ch
a = ch["mail"]["attempts"]
assert len(a) == 24 and a[-1]["sent"] == 3 and a[-1]["hours_ago"] == 0, a
assert a[-2]["retried"] == 3 and a[-8]["failed"] == 3 and a[-3]["sent"] == 0, a
PY
}
test_expect_success SERVERS '--format json says the same' json

chromium_render()
{
	local profile dom png
	profile=$(mktemp -d "$TEST_TMP/chromium.XXXXXX")
	dom=$TEST_TMP/dom.html
	png=${CRONGUARD_BUILDDIR:-.}/t1260-status-page.png
	set -- /usr/bin/chromium --headless --no-sandbox --disable-gpu \
	    --disable-quic --no-first-run --disable-background-networking \
	    --disable-component-update --disable-sync \
	    --user-data-dir="$profile"
	timeout 120 "$@" --dump-dom "file://$PAGE" > "$dom" 2> "$TEST_TMP/chromium.err" ||
	    fail "chromium --dump-dom: $(tail -5 "$TEST_TMP/chromium.err")"
	for j in nightly-report import-orders sync-ledger rotate-keys \
	    reindex cleanup mail hook; do
		grep -q "<b>$j</b>" "$dom" || fail "the DOM has no $j"
	done
	if grep -qi '<script' "$dom"; then fail "a script element in the DOM"; fi
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;' "$dom" ||
	    fail "the output is not text in the DOM"
	for s in failed missed paused running; do
		grep -q "title=\"$s " "$dom" || fail "no $s cell in the DOM"
	done
	rm -f "$png"
	timeout 120 "$@" --hide-scrollbars --window-size=1280,900 \
	    --screenshot="$png" "file://$PAGE" 2>> "$TEST_TMP/chromium.err" ||
	    fail "chromium --screenshot: $(tail -5 "$TEST_TMP/chromium.err")"
	[ -s "$png" ] || fail "no screenshot"
	# On a phone: the rows stack, the strips wrap, nothing is cut.
	timeout 120 "$@" --hide-scrollbars --window-size=390,2400 \
	    --screenshot="${png%.png}-phone.png" "file://$PAGE" \
	    2>> "$TEST_TMP/chromium.err" ||
	    fail "chromium --screenshot: $(tail -5 "$TEST_TMP/chromium.err")"
	cp "$PAGE" "${png%.png}.html"
	echo "screenshots: $png ${png%.png}-phone.png, page ${png%.png}.html"
}
test_expect_success SERVERS,CHROMIUM 'the page renders in Chromium' \
    chromium_render

# doc/nginx-status.conf, as shipped but for its two paths, serves the page
# behind its password with its headers.
served()
{
	local dir=$TEST_TMP/nginx port user=
	mkdir -p "$dir"
	port=$("$LIB_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	sed -e "s|/var/lib/cronguard/status/|$TEST_TMP/www/|" \
	    -e "s|/etc/nginx/cronguard.htpasswd|$dir/htpasswd|" \
	    "$CRONGUARD_SRCDIR/doc/nginx-status.conf" > "$dir/snippet.conf"
	printf 'ops:%s\n' "$(openssl passwd -apr1 s3cret)" > "$dir/htpasswd"
	# The workers read the page as this user (a member of its group).
	[ "$(id -u)" = 0 ] && user='user root;'
	cat > "$dir/nginx.conf" <<-NGINX
	$user
	daemon on; worker_processes 1; pid $dir/nginx.pid;
	error_log $dir/error.log;
	events {}
	http {
	  access_log off;
	  client_body_temp_path $dir; proxy_temp_path $dir;
	  fastcgi_temp_path $dir; uwsgi_temp_path $dir; scgi_temp_path $dir;
	  server { listen 127.0.0.1:$port; include $dir/snippet.conf; }
	}
	NGINX
	/usr/sbin/nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" ||
	    fail "nginx: $(cat "$dir/error.log")"
	at_exit "kill \$(cat '$dir/nginx.pid')"
	assert_eq 401 "$(curl -s -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:$port/cronguard/")" "without the password"
	assert_exit 0 curl -sf -u ops:s3cret -D "$dir/headers" \
	    "http://127.0.0.1:$port/cronguard/"
	cmp -s "$OUT" "$PAGE" || fail "nginx served another file"
	assert_grep '^Content-Type: text/html; charset=utf-8' "$dir/headers"
	assert_grep "^Content-Security-Policy: default-src 'none'" "$dir/headers"
	assert_grep '^Cache-Control: no-cache' "$dir/headers"
}
test_expect_success SERVERS,NGINX 'doc/nginx-status.conf serves the page' served

# jobs ack of sync-ledger's slot 4 covers it and the older missed slots:
# jobs check stops counting them, and the strip shows them apart, the
# newer missed slots still missed.
acked()
{
	runs
	assert_exit 0 cg jobs ack sync-ledger --slot "$(slot 4)" --reason "cron was down"
	assert_exit 0 cg status --format json --slots 10
	"$LIB_PY" - "$OUT" <<'PY' || fail "json: $(cat "$OUT")"
import json, sys
j = json.load(open(sys.argv[1]))
s = [x for x in j["jobs"] if x["job"] == "sync-ledger"][0]["cells"]
s = [c["state"] for c in s]
assert s.count("acknowledged") == 3, s
last_ack = max(i for i, x in enumerate(s) if x == "acknowledged")
assert "missed" in s[last_ack + 1:] and "missed" not in s[:last_ack], s
assert s[last_ack - 3] == "success", s
PY
	assert_exit 0 cg status --html "$PAGE"
	grep -q '<td title="acknowledged ' "$PAGE" || fail "no acknowledged cell"
	grep -q '<td title="missed ' "$PAGE" || fail "no missed cell left"
}
test_expect_success SERVERS 'an acknowledged slot is shown apart' acked

unreachable()
{
	cp "$PAGE" "$TEST_TMP/old.html"
	sed 's/port = [0-9]*;/port = 1;/' "$CONF" > "$TEST_TMP/down.conf"
	assert_exit 69 "$CRONGUARD_BIN" -c "$TEST_TMP/down.conf" status \
	    --html "$PAGE" --format json
	assert_grep 'The database could not be reached' "$PAGE"
	assert_grep 'DATABASE UNREACHABLE' "$PAGE"
	assert_grep 'Nothing on this page is current' "$PAGE"
	if grep -q 'Generated at' "$PAGE"; then fail "an old page kept"; fi
	if grep -q 'nightly-report' "$PAGE"; then fail "old rows shown"; fi
	assert_grep '"error": ".+' "$OUT"
	assert_grep 'cronguard: status: ' "$ERR"
}
test_expect_success SERVERS 'a database that cannot be reached is said plainly' \
    unreachable

bad_options()
{
	conf
	assert_exit 64 cg status
	assert_exit 64 cg status --format xml
	assert_exit 64 cg status --format json --slots 0
	assert_exit 64 cg status --format json --slots 1001
	assert_exit 64 cg status --html ''
}
test_expect_success 'bad options are usage errors' bad_options

test_done
