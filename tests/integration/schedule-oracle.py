#!/usr/bin/python3
"""The schedule evaluator against Debian's python3-croniter.

usage: schedule-oracle.py DRIVER [COUNT] [SEED]

Generates COUNT (default 12000) random (expression, zone, instant)
triples, asks DRIVER (tests/schedule-oracle: "expr<TAB>zone<TAB>t" in,
"prev<TAB>next" out) and croniter for the latest slot at or before t and
the earliest after it, and compares.  Prints every mismatch and the
counts; exits 1 on any mismatch that no rule below explains.

How croniter is asked:
  * get_next(t) is strictly after t, as schedule_next; get_prev(t) is
    strictly before, so it is asked from t + 1 s ("at or before t").
  * Instants are tz-aware datetimes in the zone (dateutil's tz.gettz, or
    tz.tzoffset for a fixed offset).
  * day_or: cron(5) (Vixie cron) combines the day fields by OR only when
    neither starts with '*'; croniter only when neither expands to
    exactly '*', so "*/2" is OR for croniter and AND for cron.  croniter
    is given day_or=False where cron's rule says AND: the answer is then
    croniter's, for cron's rule.  Counted as "day_or=False".
  * Where cron's rule says OR and croniter would not, the expression
    croniter gets is the equivalent one it reads as cron does: a day
    field listing its whole range ("1-31", "sun-sat") is "*" for croniter
    and restricted for cron, so every day matches: both day fields "*"
    ("full-range"); a day of the month that no selected month has ("31"
    with "4") leaves the day of week alone: day-of-month "*"
    ("dom-never"; croniter gives up on it).

Deliberate differences (cronguard.conf(5), "Schedules"), excluded by rule:
  D1 (DST) croniter 1.3.5 computes in wall-clock time and then shifts by
     the change of UTC offset between the start and the result, which
     around a transition gives times before the start, the second pass of
     a repeated hour, or an hour off.  cronguard maps a nonexistent local
     time to the first instant after the gap and a repeated one to its
     first pass.  A mismatch is D1 when a transition of the zone lies
     within 26 h of the instants involved (t, ours, croniter's) AND
     croniter's own answer in wall-clock time (naive datetimes), mapped
     to instants by cronguard's rule, equals ours.
  D2 (29 February) croniter 1.3.5's get_prev takes February as 28 days
     long when it steps back into it from another month (it uses the
     start's month and year for the length), and gives up when 29
     February is a selected day.  A prev mismatch is D2 when our prev is
     a 29 February (or croniter gave up and 29 February is selected),
     croniter's is earlier, and croniter's own get_next agrees with ours:
     from one second before ours it returns ours, and from ours it
     returns an instant after t.
  D3 (March) croniter 1.3.5's get_next through February, with a
     selected day of the month that February lacks (29 to 31) still ahead,
     skips the days of March before that day ("0 0 1,31 * *" from 25
     February gives 31 March).  A next mismatch is D3 when our next is in
     March, croniter's later (or it gave up), and croniter's own get_next
     from one second before ours returns ours.
  Anything else fails; a triple counts once per rule it needed.

Near a transition (t within 26 h of one, Europe/Berlin and
America/New_York) agreeing with croniter is not enough, since croniter
gets some of these wrong the same way a careless evaluator would (the
second pass of a repeated hour): there the answer must also equal
croniter's wall-clock answer mapped by the rule ("rule checked").
"""

import calendar
import datetime
import random
import subprocess
import sys
import zoneinfo

try:
    from croniter import croniter
    from dateutil import tz
except ImportError as e:  # the shell test turns this into a skip
    print("croniter missing: %s" % e)
    sys.exit(77)

DRIVER = sys.argv[1]
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 12000
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 20261201
rng = random.Random(SEED)

DST_ZONES = ["Europe/Berlin", "America/New_York"]
OTHER_ZONES = ["UTC", "+09:00", "-05:30", "Australia/Sydney",
               "Asia/Kolkata", "Europe/London"]
MACROS = ["@yearly", "@annually", "@monthly", "@weekly", "@daily",
          "@midnight", "@hourly"]
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep",
          "oct", "nov", "dec"]
DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
WINDOW = 26 * 3600


def utc(*a):
    return calendar.timegm(datetime.datetime(*a).timetuple())


def tzinfo(zone):
    if zone[0] in "+-":
        sign = -1 if zone[0] == "-" else 1
        return tz.tzoffset(None, sign * (int(zone[1:3]) * 3600 +
                                         int(zone[4:6]) * 60))
    if zone == "UTC":
        return tz.tzutc()
    z = tz.gettz(zone)
    assert z is not None, zone
    return z


# ---------------------------------------------------------- transitions

def offset(z, t):
    return datetime.datetime.fromtimestamp(t, z).utcoffset().total_seconds()


def transitions(zone, y0, y1):
    """Instants where the zone's offset changes, years y0..y1."""
    z = tzinfo(zone)
    out = []
    t, end = utc(y0, 1, 1), utc(y1 + 1, 1, 1)
    o = offset(z, t)
    while t < end:
        n = offset(z, t + 3 * 3600)
        if n != o:
            a, b = t, t + 3 * 3600
            while b - a > 1:
                m = (a + b) // 2
                if offset(z, m) == o:
                    a = m
                else:
                    b = m
            out.append(b)
            o = n
        t += 3 * 3600
    return out


TRANS = {zone: transitions(zone, 2024, 2029)
         for zone in DST_ZONES + OTHER_ZONES}


def near_transition(zone, *ts):
    lo, hi = min(ts) - WINDOW, max(ts) + WINDOW
    return any(lo <= x <= hi for x in TRANS[zone])


# ------------------------------------------------------------ generator

def gen_value(field):
    lo, hi = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)][field]
    if field == 2 and rng.random() < 0.8:
        hi = 28
    return rng.randint(lo, hi), lo, hi


def name(field, v):
    if field == 3 and rng.random() < 0.3:
        return rng.choice([MONTHS[v - 1], MONTHS[v - 1].upper(),
                           MONTHS[v - 1].capitalize()])
    if field == 4 and v < 7 and rng.random() < 0.3:
        return rng.choice([DAYS[v], DAYS[v].upper(), DAYS[v].capitalize()])
    return str(v)


def gen_item(field):
    lo, hi = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)][field]
    r = rng.random()
    if r < 0.35:
        return name(field, gen_value(field)[0])
    if r < 0.6:
        a = rng.randint(lo, hi)
        b = rng.randint(a, hi)
        return "%s-%s" % (name(field, a), name(field, b))
    if r < 0.8:
        a = rng.randint(lo, hi)
        b = rng.randint(a, hi)
        return "%s-%s/%d" % (name(field, a), name(field, b),
                             rng.randint(1, max(1, hi // 2)))
    return "*/%d" % rng.randint(1, max(1, hi // 2))


def gen_field(field):
    r = rng.random()
    star = {0: 0.15, 1: 0.35, 2: 0.55, 3: 0.7, 4: 0.55}[field]
    if r < star:
        return "*"
    n = 1 if rng.random() < 0.7 else rng.randint(2, 3)
    return ",".join(gen_item(field) for _ in range(n))


def expand(field, text):
    lo, hi = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)][field]
    out = set()
    for item in text.split(","):
        step = 1
        if "/" in item:
            item, s = item.split("/")
            step = int(s)
        if item == "*":
            a, b = lo, hi
        elif "-" in item:
            a, b = [num(field, x) for x in item.split("-")]
        else:
            a = b = num(field, item)
        out.update(range(a, b + 1, step))
    return out


def num(field, x):
    if x.isdigit():
        return int(x)
    names = MONTHS if field == 3 else DAYS
    return names.index(x.lower()) + (1 if field == 3 else 0)


def and_rule(fields):
    return fields[2].startswith("*") or fields[4].startswith("*")


def matches_ever(fields):
    """cron(5) rules: with the day fields ANDed, some selected month must
    have a selected day (schedule_parse refuses the rest)."""
    return not and_rule(fields) or dom_occurs(fields)


def dom_occurs(fields):
    """Some selected month has a selected day of the month."""
    mdays = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    doms = expand(2, fields[2])
    return any(d <= mdays[m - 1] for m in expand(3, fields[3]) for d in doms)


def gen_expr():
    while True:
        fields = [gen_field(i) for i in range(5)]
        if matches_ever(fields):
            return " ".join(fields)


def gen_instant(zone):
    r = rng.random()
    if zone in DST_ZONES and r < 0.5:
        # Around a transition of 2026 or 2027 (both in each year).
        tr = rng.choice([x for x in TRANS[zone]
                         if utc(2026, 1, 1) <= x < utc(2028, 1, 1)])
        span = rng.choice([3600, 3 * 3600, 30 * 3600])
        t = tr + rng.randint(-span, span)
    else:
        t = rng.randint(utc(2025, 1, 1), utc(2029, 1, 1))
    if rng.random() < 0.3:
        t -= t % 60  # on a minute: slots themselves
    return t


def gen_triples():
    out = []
    # Every macro, in every zone, around transitions and elsewhere.
    for m in MACROS:
        for zone in DST_ZONES + OTHER_ZONES:
            for _ in range(12):
                out.append((m, zone, gen_instant(zone)))
    while len(out) < COUNT:
        zone = rng.choice(DST_ZONES * 3 + OTHER_ZONES)
        out.append((gen_expr(), zone, gen_instant(zone)))
    return out


# --------------------------------------------------------------- croniter

def macro_expr(expr):
    return {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
            "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
            "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
            "@hourly": "0 * * * *"}.get(expr, expr)


def croniter_args(expr):
    """The expression and day_or that make croniter answer for cron(5)'s
    day rule, and which translation that took."""
    e = macro_expr(expr)
    f = e.split()
    vixie_or = not f[2].startswith("*") and not f[4].startswith("*")
    if not vixie_or:
        return e, False, "day_or=False" if f[2] != "*" and f[4] != "*" \
            else "exact"
    if not dom_occurs(f):
        # No selected day of the month occurs in the selected months (31
        # in April): the days are those of the day of week alone.
        # croniter gives up on the day-of-month branch of its OR.
        return " ".join(f[:2] + ["*", f[3], f[4]]), True, "dom-never"
    exp = croniter.expand(e)[0]
    if exp[2] == ["*"] or exp[4] == ["*"]:
        # A field listing its whole range ("1-31", "sun-sat") is restricted
        # for cron, so the day matches either field: every day.  croniter
        # reads it as "*" and ANDs.
        return " ".join(f[:2] + ["*", f[3], "*"]), True, "full-range"
    return e, True, "exact"


def croniter_aware(expr, zone, t):
    """croniter's (prev, next) with tz-aware datetimes; a side croniter
    gives up on is the text of its exception."""
    z = tzinfo(zone)
    e, day_or, _ = croniter_args(expr)
    out = []
    for start, prev in ((t + 1, True), (t, False)):
        it = croniter(e, datetime.datetime.fromtimestamp(start, z),
                      day_or=day_or)
        try:
            d = it.get_prev(datetime.datetime) if prev else \
                it.get_next(datetime.datetime)
            out.append(int(d.timestamp()))
        except Exception as ex:
            out.append("croniter: %s" % ex)
    return tuple(out)


def croniter_confirms(expr, zone, ours):
    """croniter's get_next from one second before ours returns ours."""
    z = tzinfo(zone)
    e, day_or, _ = croniter_args(expr)
    try:
        n = croniter(e, datetime.datetime.fromtimestamp(ours - 1, z),
                     day_or=day_or).get_next(datetime.datetime)
    except Exception:
        return False
    return int(n.timestamp()) == ours


def leap_day_prev(expr, zone, t, ours, theirs):
    """D2: croniter's get_prev took February as 28 days long (or gave up
    on 29 February); croniter's get_next says ours is the latest slot."""
    z = tzinfo(zone)
    d = datetime.datetime.fromtimestamp(ours, z)
    f = macro_expr(expr).split()
    if (d.month, d.day) != (2, 29) and not (
            isinstance(theirs, str) and 2 in expand(3, f[3]) and
            29 in expand(2, f[2])):
        return False
    if isinstance(theirs, int) and theirs >= ours:
        return False
    if not croniter_confirms(expr, zone, ours):
        return False
    e, day_or, _ = croniter_args(expr)
    try:
        n = croniter(e, datetime.datetime.fromtimestamp(ours, tzinfo(zone)),
                     day_or=day_or).get_next(datetime.datetime)
    except Exception:
        return False
    return int(n.timestamp()) > t


def march_next(expr, zone, t, ours, theirs):
    """D3: croniter's get_next through February skipped days of March."""
    z = tzinfo(zone)
    if datetime.datetime.fromtimestamp(ours, z).month != 3:
        return False
    if isinstance(theirs, int) and theirs <= ours:
        return False
    return croniter_confirms(expr, zone, ours)


def pep495_zone(zone):
    """The zone for the rule's mapping: zoneinfo (PEP 495: fold=0 is the
    first pass, and a time in a gap takes the offset before it)."""
    if zone[0] in "+-":
        return tzinfo(zone)
    return zoneinfo.ZoneInfo(zone)


def instant_of(z, naive):
    """cronguard's rule: the first instant whose wall clock reads naive or
    later (a gap: the instant it ends; a repeat: the first pass)."""
    t0 = int(naive.replace(tzinfo=z, fold=0).timestamp())
    back = datetime.datetime.fromtimestamp(t0, z).replace(tzinfo=None)
    if back == naive:
        t1 = int(naive.replace(tzinfo=z, fold=1).timestamp())
        return min(t0, t1)
    # In a gap: t0 used the offset before it, so lies after its end.
    a, b = t0 - 3 * 3600, t0
    while b - a > 1:
        m = (a + b) // 2
        if datetime.datetime.fromtimestamp(m, z).replace(
                tzinfo=None) >= naive:
            b = m
        else:
            a = m
    return b


def croniter_wall(expr, zone, t):
    """croniter's answer in wall-clock time (naive datetimes), mapped to
    instants by cronguard's rule; None for a side croniter gives up on."""
    z = pep495_zone(zone)
    e, day_or, _ = croniter_args(expr)
    wall = datetime.datetime.fromtimestamp(t, z).replace(tzinfo=None)
    p = n = None
    try:
        it = croniter(e, wall + datetime.timedelta(hours=3, seconds=1),
                      day_or=day_or)
        while p is None:
            x = instant_of(z, it.get_prev(datetime.datetime))
            p = x if x <= t else None
    except Exception:
        pass
    try:
        it = croniter(e, wall - datetime.timedelta(hours=3), day_or=day_or)
        while n is None:
            x = instant_of(z, it.get_next(datetime.datetime))
            n = x if x > t else None
    except Exception:
        pass
    return p, n


# ------------------------------------------------------------------ main

def fmt(zone, t):
    d = datetime.datetime.fromtimestamp(t, tzinfo(zone))
    return "%d (%s)" % (t, d.isoformat())


def main():
    triples = gen_triples()
    inp = "".join("%s\t%s\t%d\n" % x for x in triples)
    res = subprocess.run([DRIVER], input=inp, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(res) == len(triples), (len(res), len(triples))
    shown = {}
    counts = {"triples": len(triples), "agree": 0, "D1": 0, "D2": 0, "D3": 0,
              "undocumented": 0, "day_or=False": 0, "full-range": 0, "dom-never": 0, "rule checked": 0,
              "near transition": 0}
    zones = {}
    macros = set()
    for (expr, zone, t), line in zip(triples, res):
        zones[zone] = zones.get(zone, 0) + 1
        if expr.startswith("@"):
            macros.add(expr)
        near = near_transition(zone, t)
        counts["near transition"] += near
        kind = croniter_args(expr)[2]
        if kind != "exact":
            counts[kind] += 1
        a, b = line.split("\t")
        if a == "error":
            print("MISMATCH %r %s %d: cronguard error %s" % (expr, zone,
                                                            t, b))
            counts["undocumented"] += 1
            continue
        if "-" in (a, b):
            print("MISMATCH %r %s %d: cronguard found no slot (%s %s)" % (
                expr, zone, t, a, b))
            counts["undocumented"] += 1
            continue
        ours = (int(a), int(b))
        theirs = croniter_aware(expr, zone, t)
        if near and zone in DST_ZONES:
            # Near a transition agreeing with croniter is not enough (it
            # shares some errors): the answer must also be the rule's.
            counts["rule checked"] += 1
            ruled = croniter_wall(expr, zone, t)
            if ruled != ours and ours == theirs:
                counts["undocumented"] += 1
                print("RULE %r %s t=%s: ours (and croniter's) prev %s next "
                      "%s; croniter in wall-clock time by the rule %s" % (
                          expr, zone, fmt(zone, t), fmt(zone, ours[0]),
                          fmt(zone, ours[1]), ruled))
                continue
        if ours == theirs:
            counts["agree"] += 1
            continue
        involved = [t] + list(ours) + [x for x in theirs
                                       if isinstance(x, int)]
        wall = None
        why = []
        for i in (0, 1):
            if ours[i] == theirs[i]:
                continue
            if i == 0 and leap_day_prev(expr, zone, t, ours[0], theirs[0]):
                why.append("D2")
                continue
            if i == 1 and march_next(expr, zone, t, ours[1], theirs[1]):
                why.append("D3")
                continue
            if near_transition(zone, *involved):
                if wall is None:
                    wall = croniter_wall(expr, zone, t)
                if wall[i] == ours[i]:
                    why.append("D1")
                    continue
            why.append(None)
        if None not in why:
            for w in set(why):
                counts[w] += 1
                shown[w] = shown.get(w, 0) + 1
                if shown[w] <= 3:
                    print("%s (deliberate) %r %s t=%s: ours prev %s next "
                          "%s; croniter prev %s next %s" % (
                              w, expr, zone, fmt(zone, t),
                              fmt(zone, ours[0]), fmt(zone, ours[1]),
                              *[fmt(zone, x) if isinstance(x, int) else x
                                for x in theirs]))
            continue
        counts["undocumented"] += 1
        print("MISMATCH %r %s t=%s: ours prev %s next %s; croniter prev %s "
              "next %s" % (expr, zone, fmt(zone, t), fmt(zone, ours[0]),
                           fmt(zone, ours[1]),
                           *[fmt(zone, x) if isinstance(x, int) else x
                             for x in theirs]))
    print("zones: %s" % ", ".join("%s %d" % kv for kv in sorted(
        zones.items())))
    print("macros: %s" % " ".join(sorted(macros)))
    print("counts: %s" % ", ".join("%s %d" % (k, v)
                                   for k, v in counts.items()))
    if len(macros) != len(MACROS):
        print("FAIL: not every macro was tried")
        return 1
    return 1 if counts["undocumented"] else 0


sys.exit(main())
