#!/bin/sh
# amqps:// to a node whose TLS listener has a certificate from a
# throwaway CA (made here with the openssl CLI): with tls_ca naming that
# CA the rows are delivered; a channel trusting another CA refuses the
# broker (peer verification) and delivers nothing.
# Cases: setup; the dispatch.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
need_servers
. "$CRONGUARD_SRCDIR/scripts/testenv-rabbitmq"
command -v openssl > /dev/null || fail "openssl CLI missing"
# The node runs as the rabbitmq user: it must reach its key and certs.
pki=$TEST_TMP/pki
mkdir -p "$pki"
chmod o+x "$TEST_TMP"
chmod o+rx "$pki"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
# shellcheck disable=SC2086 # $ec: several options
(
	cd "$pki"
	openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 \
	    -subj "/CN=cronguard test CA" &&
	openssl req -x509 $ec -keyout other.key -out other.pem -days 2 \
	    -subj "/CN=another CA" &&
	openssl req $ec -keyout server.key -out server.csr -subj "/CN=localhost" &&
	printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > ext &&
	openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key \
	    -CAcreateserial -out server.pem -days 2 -extfile ext
) > "$TEST_TMP/openssl.log" 2>&1 || fail "openssl: $(cat "$TEST_TMP/openssl.log")"
chmod o+r "$pki/server.key" "$pki/server.pem" "$pki/ca.pem"
TLS_PORT=$(testenv_rabbitmq_port)
testenv_rabbitmq_for_test \
    -c "listeners.ssl.1 = 127.0.0.1:$TLS_PORT" \
    -c "ssl_options.cacertfile = $pki/ca.pem" \
    -c "ssl_options.certfile = $pki/server.pem" \
    -c "ssl_options.keyfile = $pki/server.key" \
    -c "ssl_options.verify = verify_none" \
    -c "ssl_options.fail_if_no_peer_cert = false" \
    q
setup()
{
	write_config "$CONF" "
	outbox = { batch_size = 50; max_attempts = 5; };
	channels = {
	  good = { type = \"amqp\"; url = \"amqps://localhost:$TLS_PORT\";
	           tls_ca = \"$pki/ca.pem\";
	           username = \"guest\"; password_file = \"$TEST_TMP/pw\";
	           routing_key = \"q\"; };
	  wrongca = { type = \"amqp\"; url = \"amqps://localhost:$TLS_PORT\";
	           tls_ca = \"$pki/other.pem\";
	           username = \"guest\"; password_file = \"$TEST_TMP/pw\";
	           routing_key = \"q\"; };
	};"
	assert_exit 0 cg db migrate
	mysql_q "INSERT INTO outbox_messages (channel, event_type, payload)
	    SELECT IF(seq <= 20, 'good', 'wrongca'), 'test.event',
	        JSON_OBJECT('n', seq) FROM seq_1_to_30"
}
test_expect_success 'setup: a channel trusting the CA, one trusting another; 30 rows' \
    setup

tls()
{
	assert_exit 0 cg -v outbox dispatch
	assert_eq 20 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE channel = 'good' AND status = 'SENT' AND attempts = 1")" \
	    "rows SENT over amqps"
	assert_eq 0 "$(mysql_q "SELECT COUNT(*) FROM outbox_messages
	    WHERE channel = 'wrongca' AND (status = 'SENT'
	    OR last_error NOT LIKE 'amqp: connect to localhost:$TLS_PORT: %')")" \
	    "rows to a broker not signed by tls_ca's CA"
	assert_eq 20 "$(testenv_rabbitmq_count q)" "messages in the queue"
	mysql_q "SELECT DISTINCT last_error FROM outbox_messages WHERE channel = 'wrongca'"
}
test_expect_success 'tls_ca'"'"'s CA: delivered over amqps; another CA: refused, nothing sent' \
    tls

test_done
