#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qpoold's Prometheus endpoint ([server] metrics_listen, docs/METRICS.md):
# a port already taken stops qpoold at start with one line; the text passes
# `promtool check metrics` and counts the jobs that ran; a real Prometheus
# scrapes it and gives the count back through its HTTP API; requests that
# are not GET /metrics get 405/404/400/431, a client that sends nothing is
# closed, with one log line for all of them, and qpoold serves on.
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || skip "promtool is not installed (apt-get install prometheus)"
command -v prometheus >/dev/null || skip "prometheus is not installed (apt-get install prometheus)"
HTTP=$QP_TOP/tests/integration/metrics-http.py
port=$(qp_free_port)
qp_setup "[server]
metrics_listen = 127.0.0.1:$port"

note "a metrics port already taken: qpoold refuses to start, in one line"
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); print("ready", flush=True); time.sleep(60)' "$port" > "$QP_T/squat.out" &
squat=$!
QP_PIDS+=("$squat")
for _ in $(seq 100); do grep -q ready "$QP_T/squat.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$QP_T/squat.out" || fail "the squatter did not bind $port"
rc=0
timeout 20 "$QP_BIN/qpoold" -f "$QPOOL_CONF" > "$QP_T/taken.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "qpoold with its metrics port taken exited $rc (want non-zero, at once)"
grep -q "metrics_listen.*127.0.0.1:$port.*in use" "$QP_T/taken.out" || { cat "$QP_T/taken.out" >&2; fail "no line names metrics_listen and the port in use"; }
[ ! -S "$QP_T/qpoold.sock" ] || fail "qpoold left its socket behind"
qp_stop "$squat"

qp_start_server
qp_start_node n1 0
n=5
ids=()
for i in $(seq "$n"); do ids+=("$(echo true | as qpuser1 qsub -o /dev/null -e /dev/null)") || fail "qsub"; done
held=$(echo true | as qpuser2 qsub -h -q short -o /dev/null -e /dev/null) || fail "qsub -h"
for id in "${ids[@]}"; do qp_wait "$id" completed; done

note "GET /metrics: promtool check metrics passes, the values are the pool's"
"$HTTP" "$port" get > "$QP_T/scrape.txt" || fail "scrape"
head -1 "$QP_T/scrape.txt" | grep -q '^HTTP/1.1 200' || fail "scrape: $(head -1 "$QP_T/scrape.txt")"
tail -n +2 "$QP_T/scrape.txt" > "$QP_T/metrics.txt"
promtool check metrics < "$QP_T/metrics.txt" > "$QP_T/promtool.out" 2>&1 || { cat "$QP_T/promtool.out" >&2; fail "promtool check metrics"; }
val() { awk -v k="$1" '$1 == k { print $2 }' "$QP_T/metrics.txt"; }
[ "$(val 'qpool_jobs_ended_total{queue="batch",state="completed"}')" = "$n" ] || fail "completed: $(val 'qpool_jobs_ended_total{queue="batch",state="completed"}'), want $n"
[ "$(val 'qpool_jobs_submitted_total{queue="batch"}')" = "$n" ] || fail "submitted to batch: want $n"
[ "$(val 'qpool_jobs{queue="short",state="held"}')" = 1 ] || fail "held in short: want 1"
[ "$(val 'qpool_jobs{queue="batch",state="queued"}')" = 0 ] || fail "queued in batch: want 0"
[ "$(val 'qpool_nodes{state="up"}')" = 1 ] || fail "nodes up: want 1"
[ "$(val 'qpool_cpus{state="idle"}')" = 1 ] || fail "idle CPUs: want 1 (n1 has CPU 0)"
[ "$(val 'qpool_server_active')" = 1 ] || fail "not active"
[ "$(val 'qpool_schedule_pass_seconds_count')" -ge 1 ] || fail "no pass counted"
[ "$(val 'qpool_store_commit_seconds_count')" -ge "$n" ] || fail "fewer commits than jobs"
# submit (n + 1), dispatch (n) and end (n): 3n + 1 changes at least.
[ "$(val 'qpool_job_state_changes_total')" -ge $((3 * n + 1)) ] || fail "state changes: $(val 'qpool_job_state_changes_total')"
"$HTTP" "$port" head | grep -q '^HTTP/1.1 200' || fail "HEAD /metrics"
"$HTTP" "$port" body | grep -q '^qpool_server_active 1' || fail "HTTP/1.0 with a query string"

note "bad requests: 405, 404, 400, 431, an idle client closed; one log line; qpoold serves on"
before=$(grep -c 'metrics:' "$QP_T/qpoold.log")
[ "$("$HTTP" "$port" post)" = "HTTP/1.1 405 Method Not Allowed" ] || fail "POST: not 405"
[ "$("$HTTP" "$port" root)" = "HTTP/1.1 404 Not Found" ] || fail "GET /: not 404"
[ "$("$HTTP" "$port" garbage)" = "HTTP/1.1 400 Bad Request" ] || fail "garbage: not 400"
r=$("$HTTP" "$port" big)
[ "$r" = "HTTP/1.1 431 Request Header Fields Too Large" ] || [ "$r" = closed ] || fail "a 20 kB head: $r"
# 20 clients that send nothing (past the 16 at once): each is closed, the
# oldest first, and a scrape among them is served.
for i in $(seq 20); do "$HTTP" "$port" idle > "$QP_T/idle.$i" & done
sleep 0.5   # let them connect: what follows must be served despite them
"$HTTP" "$port" get | head -1 | grep -q '^HTTP/1.1 200' || fail "a scrape among 20 idle clients"
wait_idle=0
for i in $(seq 20); do
	for _ in $(seq 300); do [ -s "$QP_T/idle.$i" ] && break; sleep 0.05; done
	[ -s "$QP_T/idle.$i" ] || fail "idle client $i still open after 15 s"
	awk '{ exit !($1 <= 12) }' "$QP_T/idle.$i" || fail "idle client $i closed after $(cat "$QP_T/idle.$i") s"
	wait_idle=$((wait_idle + 1))
done
after=$(grep -c 'metrics:' "$QP_T/qpoold.log")
[ $((after - before)) -eq 1 ] || { grep 'metrics:' "$QP_T/qpoold.log" >&2; fail "$((after - before)) log lines for the bad requests, want 1"; }
kill -0 "$QP_SERVER_PID" || fail "qpoold died"
"$QP_BIN/qstat" > /dev/null || fail "qstat after the bad requests"

note "metrics_listen changes only at restart: a reload that moves it is refused"
cp "$QPOOL_CONF" "$QP_T/qpool.conf.good"
printf '[server]\nmetrics_listen = 127.0.0.1:%s\n' "$(qp_free_port)" >> "$QPOOL_CONF"
"$QP_BIN/qmgr" reload > "$QP_T/reload.out" 2>&1 && fail "a reload that moves metrics_listen was taken"
grep -q "metrics_listen" "$QP_T/reload.out" || { cat "$QP_T/reload.out" >&2; fail "the refusal does not name metrics_listen"; }
cp "$QP_T/qpool.conf.good" "$QPOOL_CONF"
"$HTTP" "$port" get | head -1 | grep -q '^HTTP/1.1 200' || fail "the old port stopped serving after the refused reload"

note "dist/prometheus: promtool accepts the scrape config and the alert rules"
promtool check config "$QP_TOP/dist/prometheus/qpool-scrape.yml" > "$QP_T/promtool.out" 2>&1 || { cat "$QP_T/promtool.out" >&2; fail "promtool check config dist/prometheus/qpool-scrape.yml"; }
promtool check rules "$QP_TOP/dist/prometheus/qpool-alerts.yml" > "$QP_T/promtool.out" 2>&1 || { cat "$QP_T/promtool.out" >&2; fail "promtool check rules dist/prometheus/qpool-alerts.yml"; }

note "a real Prometheus scrapes qpoold and answers the count back"
pport=$(qp_free_port)
while [ "$pport" = "$port" ]; do pport=$(qp_free_port); done
mkdir -p "$QP_T/prom"
cat > "$QP_T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: qpool
    static_configs:
      - targets: ['127.0.0.1:$port']
YML
promtool check config "$QP_T/prometheus.yml" > /dev/null || fail "promtool check config"
prometheus --config.file="$QP_T/prometheus.yml" --storage.tsdb.path="$QP_T/prom" \
	--web.listen-address="127.0.0.1:$pport" >> "$QP_T/prometheus.log" 2>&1 &
QP_PIDS+=("$!")
q='qpool_jobs_ended_total{queue="batch",state="completed"}'
got=
for _ in $(seq 600); do
	got=$(python3 - "$pport" "$q" <<'PY' 2>/dev/null
import json, sys, urllib.parse, urllib.request
u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
r = json.load(urllib.request.urlopen(u, timeout=2))
print(r["data"]["result"][0]["value"][1] if r["data"]["result"] else "")
PY
)
	[ "$got" = "$n" ] && break
	sleep 0.05
done
[ "$got" = "$n" ] || fail "Prometheus says $q = '$got', want $n"
echo "PASS"
