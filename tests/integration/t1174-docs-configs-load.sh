#!/bin/sh
# Every configuration the documentation shows loads as written: each
# ```libconfig block of README.md ("```libconfig fragment": keys to add to
# a configuration, checked with a minimal database section), each literal
# block of cronguard.conf(5)'s
# EXAMPLES, and etc/cronguard.conf (as shipped, and with each of its
# commented-out example groups switched on) pass `config check`, with every
# file they name under /etc pointed at a temporary file.  A README block
# that looks like a configuration but lacks the libconfig tag fails too, so
# nothing escapes the extraction.  No servers.
# Cases: the configurations extracted; each passes config check.
. "${CRONGUARD_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
top=$CRONGUARD_SRCDIR

extracted()
{
	"$LIB_PY" - "$top" "$TEST_TMP" <<'PY' || fail "extracting the documented configurations"
import os, re, sys
top, tmp = sys.argv[1], sys.argv[2]
out = []

def readme(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    block, n = None, 0
    for i, line in enumerate(lines, 1):
        m = re.match(r"^(\s*)```(\S*)(?:[ \t]+(\S+))?\s*$", line)
        if m and block is None:
            block, ind, tag, start = [], len(m.group(1)), m.group(2), i
            frag = m.group(3) == "fragment"
        elif m:
            text = "\n".join(block) + "\n"
            looks = re.search(r"^\s*[A-Za-z_][\w-]*\s*=\s*\{", text, re.M)
            if tag == "libconfig":
                # "```libconfig fragment": keys to add to a configuration,
                # checked with the smallest database section.
                if frag and not re.search(r"^\s*database\s*=", text, re.M):
                    text = 'database = { name = "app"; };\n' + text
                out.append(("README.md:%d" % start, text))
            elif looks and tag not in ("sql", "sh"):
                sys.exit("README.md:%d: a configuration block without the "
                         "libconfig tag" % start)
            block = None
        elif block is not None:
            block.append(line[ind:] if line[:ind].strip() == "" else line)

def man(path):
    text = open(path, encoding="utf-8").read()
    ex = text.split("\n.Sh EXAMPLES\n", 1)[1].split("\n.Sh ", 1)[0]
    for i, m in enumerate(re.finditer(r"^\.Bd -literal[^\n]*\n(.*?)^\.Ed$",
                                      ex, re.S | re.M)):
        body = m.group(1).replace("@sysconfdir@", "/etc")
        if re.search(r"^\s*[A-Za-z_][\w-]*\s*=\s*\{", body, re.M):
            out.append(("cronguard.conf.5 EXAMPLES block %d" % (i + 1), body))

def shipped(path):
    text = open(path, encoding="utf-8").read()
    out.append(("etc/cronguard.conf", text))
    # Each commented-out group ("  # events = {" ... "  # };") switched on.
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)# ([A-Za-z_][\w-]*) = \{$", line)
        if not m:
            continue
        ind = m.group(1)
        for j in range(i + 1, len(lines)):
            if lines[j] == ind + "# };":
                on = lines[:]
                for k in range(i, j + 1):
                    on[k] = re.sub(r"^(\s*)# ?", r"\1", on[k], count=1)
                out.append(("etc/cronguard.conf with %s (line %d) on"
                            % (m.group(2), i + 1), "\n".join(on)))
                break

readme(os.path.join(top, "README.md"))
man(os.path.join(top, "man/cronguard.conf.5.in"))
shipped(os.path.join(top, "etc/cronguard.conf"))
if not any(w.startswith("README") for w, _ in out):
    sys.exit("no libconfig block found in README.md")
with open(os.path.join(tmp, "list"), "w") as lst:
    for n, (where, text) in enumerate(out):
        # Files under /etc (secrets, CA bundles, option files) become
        # temporary files: what is checked is the configuration.
        def repl(m):
            p = os.path.join(tmp, "files", m.group(1).lstrip("/"))
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if not os.path.exists(p):
                with open(p, "w") as f:
                    f.write("https://hc-ping.com/x\n" if p.endswith(".ping")
                            else "s3cret\n")
                os.chmod(p, 0o640)  # the documented root:cronguard 0640
            return '"%s"' % p
        text = re.sub(r'"(/etc/[^"]+)"', repl, text)
        conf = os.path.join(tmp, "doc%02d.conf" % n)
        with open(conf, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(conf, 0o640)
        lst.write("%s\t%s\n" % (conf, where))
PY
}
test_expect_success 'the documented configurations are extracted, each tagged' \
    extracted

each_loads()
{
	local n bad tab file where rc
	n=0
	bad=0
	tab=$(printf '\t')
	while IFS=$tab read -r file where; do
		n=$((n + 1))
		rc=0
		"$CRONGUARD_BIN" -c "$file" config check > "$OUT" 2> "$ERR" || rc=$?
		if [ "$rc" != 0 ]; then
			echo "FAIL: $where: config check exited $rc:"
			sed 's/^/    /' "$ERR"
			bad=1
		else
			echo "ok: $where"
		fi
	done < "$TEST_TMP/list"
	[ "$n" -ge 4 ] || fail "only $n documented configurations found"
	[ "$bad" = 0 ] || fail "a documented configuration does not load"
}
test_expect_success 'each documented configuration passes config check' \
    each_loads

test_done
