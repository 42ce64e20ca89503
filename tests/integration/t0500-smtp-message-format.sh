#!/bin/sh
# Mail payloads arrive as well-formed MIME (parsed back with Python's email
# package): From/To/Cc/Reply-To/extra headers, a long Korean subject and
# Korean display names decoded exactly, multipart/alternative with both
# bodies, a single part otherwise, Message-ID <message_id@cronguard>, Date,
# and bcc recipients delivered (envelope) but absent from every header.
# Cases: setup; the dispatch; the envelope; the messages.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
export CRONGUARD_SQLDIR="${CRONGUARD_SQLDIR:-$CRONGUARD_SRCDIR/sql}"
D=$MAIL_DOMAIN
SUBJECT='예약 확정 안내: 2026년 12월 1일 오후 3시 서울 강남점 예약이 확정되었습니다. 감사합니다!'
setup()
{
	local FULL_ID TEXT_ID
	write_config "$CONF" "channels = { mail = { type = \"smtp\"; url = \"$SMTP_URL\";
	  from = \"예약 센터 <noreply@example.com>\"; connections = 2; }; };"
	assert_exit 0 cg db migrate

	assert_exit 0 cg outbox enqueue --channel mail --type full --payload "{
	  \"to\": [\"김민수 <kim@$D>\", \"Lee, Jiwoo <lee@$D>\"],
	  \"cc\": \"park@$D\", \"bcc\": [\"audit@$D\", \"archive@$D\"],
	  \"reply_to\": \"help@example.com\", \"subject\": \"$SUBJECT\",
	  \"text\": \"안녕하세요 김민수님,\\n예약이 확정되었습니다.\",
	  \"html\": \"<p>안녕하세요 <b>김민수</b>님</p>\",
	  \"headers\": {\"X-Campaign\": \"spring-2026\", \"X-Note\": \"예약\"}}"
	FULL_ID=$(cut -f2 -d' ' "$OUT")
	assert_exit 0 cg outbox enqueue --channel mail --type text --payload \
	    "{\"to\": \"text-only@$D\", \"subject\": \"plain\", \"text\": \"line 1\\nline 2 = two\"}"
	TEXT_ID=$(cut -f2 -d' ' "$OUT")
	assert_exit 0 cg outbox enqueue --channel mail --type html --payload \
	    "{\"to\": \"html-only@$D\", \"html\": \"<p>only html</p>\"}"
	echo "$FULL_ID" > "$TEST_TMP/full_id"
	echo "$TEXT_ID" > "$TEST_TMP/text_id"
}
test_expect_success 'setup: three messages: full, text only, html only' setup

dispatched()
{
	assert_exit 0 cg outbox dispatch
	assert_eq 3 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages WHERE status = 'SENT'")" "sent rows"
	assert_eq 3 "$(smtp_count)" "messages received"
}
test_expect_success 'one dispatch sends all three' dispatched

# The envelope of the full message names every recipient, bcc included.
envelope()
{
	local r
	smtp_envelopes | grep "kim@$D" > "$TEST_TMP/env"
	for r in kim lee park audit archive; do
		grep -q "\"$r@$D\"" "$TEST_TMP/env" || fail "envelope lacks $r@$D"
	done
}
test_expect_success 'the envelope names every recipient, bcc included' \
    envelope

mime()
{
	local FULL_ID TEXT_ID
	FULL_ID=$(cat "$TEST_TMP/full_id")
	TEXT_ID=$(cat "$TEST_TMP/text_id")
	smtp_messages > "$TEST_TMP/files"
	"$LIB_PY" - "$TEST_TMP/files" "$D" "$SUBJECT" "$FULL_ID" "$TEXT_ID" <<'PY' || fail "message check failed"
import sys, email, re
from email import policy
files, dom, subject, full_id, text_id = sys.argv[1:6]
msgs = {}
for path in open(files).read().split():
    raw = open(path, 'rb').read()
    m = email.message_from_bytes(raw, policy=policy.default)
    msgs[m['To'].addresses[0].addr_spec.split('@')[0]] = (m, raw)
def check(cond, what):
    if not cond:
        print("FAIL:", what); sys.exit(1)

m, raw = msgs['kim']
check(str(m['Subject']) == subject, "subject decoded: %r" % str(m['Subject']))
to = m['To'].addresses
check([a.display_name for a in to] == ['김민수', 'Lee, Jiwoo'], "to names %r" % [a.display_name for a in to])
check([a.addr_spec for a in to] == ['kim@' + dom, 'lee@' + dom], "to addrs")
check(m['Cc'].addresses[0].addr_spec == 'park@' + dom, "cc")
check(m['From'].addresses[0].display_name == '예약 센터', "from name %r" % str(m['From']))
check(m['From'].addresses[0].addr_spec == 'noreply@example.com', "from addr")
check(str(m['Reply-To']) == 'help@example.com', "reply-to")
check(str(m['X-Campaign']) == 'spring-2026', "extra header")
check(str(m['X-Note']) == '예약', "encoded extra header %r" % str(m['X-Note']))
check(m['Message-ID'] == '<%s@cronguard>' % full_id, "message-id %s" % m['Message-ID'])
check(m['Date'] is not None and m['Date'].datetime is not None, "date")
check(m['MIME-Version'] == '1.0', "mime-version")
check(m.get_content_type() == 'multipart/alternative', "type %s" % m.get_content_type())
parts = list(m.iter_parts())
check([p.get_content_type() for p in parts] == ['text/plain', 'text/html'], "parts")
check(parts[0].get_content().replace('\r\n', '\n') == '안녕하세요 김민수님,\n예약이 확정되었습니다.', "text body")
check('<b>김민수</b>' in parts[1].get_content(), "html body")
check(m['Bcc'] is None, "no Bcc header")
head = raw.split(b'\r\n\r\n', 1)[0]
check(b'audit@' not in raw and b'archive@' not in raw, "bcc address in message")
for line in head.split(b'\r\n'):
    # libcurl's own Content-Type line carries a long boundary
    check(len(line) <= 78 or line.startswith(b'Content-Type:'), "header line over 78: %r" % line)
    check(all(c < 128 for c in line), "8-bit header line %r" % line)
for w in re.findall(rb'=\?[^?]+\?[BbQq]\?[^?]*\?=', head):
    check(len(w) <= 75, "encoded-word over 75 characters")

m, raw = msgs['text-only']
check(m['Message-ID'] == '<%s@cronguard>' % text_id, "text message-id")
body = [p for p in m.walk() if p.get_content_type() == 'text/plain']
check(len(body) == 1 and body[0].get_content().replace('\r\n', '\n') == 'line 1\nline 2 = two', "text-only body")
check(not any(p.get_content_type() == 'text/html' for p in m.walk()), "no html part")

m, raw = msgs['html-only']
check(m['Subject'] is None, "no subject")
check([p.get_content_type() for p in m.walk() if not p.is_multipart()] == ['text/html'], "html-only")
print("ok")
PY
}
test_expect_success 'well-formed MIME, decoded exactly, no bcc in any header' \
    mime

test_done
