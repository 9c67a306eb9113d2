#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Recorded attributes cannot forge qstat -f (issue 29, item 11): qsub -W
# and qpoold refuse names qpool or PBS sets itself (Job_Owner, job_state,
# exec_host, Exit_status, resources_used.*) and any name outside PBS's
# grammar (a letter, then letters, digits, '_', '.'), with one line; a
# row recorded by an older qpool with such names prints neither over
# qpool's own attributes nor as a line of its own.
. "$(dirname "$0")/lib.sh"
qp_setup
qp_start_server
server=$(hostname -s)

note "qsub -W refuses qpool's and PBS's own names and names outside the grammar"
for w in Job_Owner=root@evil job_state=F exec_host=evil/0 Exit_status=0 euser=root \
	resources_used.cput=99:00:00 qpool_state=completed 'bad name=1' 'a-b=1' '9lives=1' \
	"$(printf 'x\nJob Id: 999.forged\n    Job_Owner')=root"; do
	out=$(echo true | as qpuser1 qsub -W "$w" 2>&1) && fail "qsub -W '$w' was taken: $out"
	[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || fail "qsub -W '$w': not one line: $out"
	echo "qsub -W ${w%%=*}: $out"
done
"$QP_BIN/qstat" -x --table | grep -qE '^[0-9]+ ' && fail "a refused qsub made a job"
ok=$(echo true | as qpuser1 qsub -h -W Account_Name=proj7 -W my.site_attr=x) || fail "a plain -W name was refused"
ok=${ok%%.*}
"$QP_BIN/qstat" -f "$ok" | grep -qx "    my.site_attr = x" || fail "a plain -W name is not in qstat -f"

note "qpoold refuses them from a raw request, bypassing qsub"
cat > "$QP_T/raw.py" <<'PY'
import json, socket, struct, sys
def submit(attrs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    b = json.dumps({"op": "submit", "id": 1, "script": "true\n", "name": "raw",
                    "workdir": "/tmp", "hold": True, "attrs": attrs}).encode()
    s.sendall(struct.pack(">I", len(b)) + b)
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return json.loads(data[4:])
bad = ["Job_Owner", "job_state", "exec_host", "Exit_status", "resources_used.cput",
       "x\nJob Id: 999.forged\n    Job_Owner", "a b", "Resource_List", "euser"]
for name in bad:
    r = submit({name: "root@evil"})
    if r.get("ok") or "\n" in r.get("error", "\n"):
        sys.exit(f"attrs {name!r}: {r}")
    print("refused:", r["error"])
r = submit({"Account_Name": "p", "Resource_List.foo": "1", "interactive": "True"})
if not r.get("ok"):
    sys.exit(f"qsub's own names refused: {r}")
print(r["jobid"])
PY
out=$(as qpuser2 python3 "$QP_T/raw.py" "$QP_T/qpoold.sock") || fail "raw submissions: $out"
echo "$out"
raw=$(echo "$out" | tail -n 1)
[ "$("$QP_BIN/qstat" -x --table | grep -cE '^[0-9]+ ')" = 2 ] || fail "a refused raw submission made a job"

note "rows an older qpool recorded do not forge qstat -f"
victim=$(echo true | as qpuser3 qsub -h -N victim) || fail "qsub victim"
victim=${victim%%.*}
qp_stop "$QP_SERVER_PID"
sqlite3 "$QP_T/state/qpool.db" "UPDATE jobs SET attrs = json_object('Job_Owner', 'root@evil', \
	'job_state', 'F', 'Exit_status', '0', 'resources_used.cput', '99:00:00', \
	'x' || char(10) || 'Job Id: 999.forged' || char(10) || '    Job_Owner', 'root@evil', \
	'Account_Name', 'kept') WHERE id = $raw" || fail "sqlite3"
qp_start_server
for layout in "" "-x"; do
	out=$("$QP_BIN/qstat" -f $layout) || fail "qstat -f $layout"
	echo "$out" | grep -q "forged" && fail "qstat -f $layout prints a forged record: $out"
	echo "$out" | grep -q "evil" && fail "qstat -f $layout prints a forged owner: $out"
	[ "$(echo "$out" | grep -c '^Job Id: ')" = 3 ] || fail "qstat -f $layout: not 3 records: $out"
done
out=$("$QP_BIN/qstat" -f "$raw")
echo "$out" | grep -qx "    Job_Owner = qpuser2@$server" || fail "the job's owner is not its own: $out"
echo "$out" | grep -qx "    job_state = H" || fail "the job's state is not its own: $out"
echo "$out" | grep -q "Exit_status" && fail "a held job shows an exit status: $out"
echo "$out" | grep -q "99:00:00" && fail "forged resources_used: $out"
echo "$out" | grep -qx "    Account_Name = kept" || fail "a plain recorded name was dropped: $out"
out=$("$QP_BIN/qstat" -f -F json "$raw") || fail "qstat -f -F json"
echo "$out" | python3 -c '
import json, sys
j = next(iter(json.load(sys.stdin)["Jobs"].values()))
assert j["Job_Owner"].startswith("qpuser2@"), j["Job_Owner"]
assert j["job_state"] == "H", j["job_state"]
assert "Exit_status" not in j and "99:00:00" not in json.dumps(j), j
assert not any("\n" in k for k in j), list(j)
' || fail "qstat -F json is forged: $out"
kill -0 "$QP_SERVER_PID" || fail "qpoold died"
echo "attr names ok"
