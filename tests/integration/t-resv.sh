#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Reservations and maintenance windows (docs/RESERVATIONS.md) on two
# simulated nodes of one CPU: a window in 20 s over one node: a 10 s job
# starts there, a 60 s job waits saying so with the remedy (a job as short
# as it says starts there now) and starts on the other node; a user's
# reservation (pbs_rsub, qsub -q R<n>): only that user's jobs run in it,
# its jobs only there; standing daily ones move to the next day; bad input
# in each dialect's words, nothing made; a window over a running job
# refused, or made to requeue it at its start; all kept across a qpoold
# restart. QP_STORE=postgresql: the same on PostgreSQL (t-resv-pg.sh).
. "$(dirname "$0")/lib.sh"
qp_setup
# Estimates each second (docs/ESTIMATES.md): the window's is checked.
printf '[server]\nestimate_interval = 1\n' >> "$QPOOL_CONF"
qp_start_server
P=${QP_NODE_PREFIX}r
N0=$P-0
N1=$P-1
qp_start_sim "$P" 2 --sim-topology "pack:1 core:1 pu:1"
SC=$QP_BIN/scontrol
PATH=$QP_BIN:$PATH   # pbs_rsub, pbs_rstat, pbs_rdel as root
nres() { "$SC" show reservation | grep -c '^ReservationName=' || true; }
epoch() { date -d "${1/T/ }" +%s; }   # Slurm's ISO time, local
field() { sed -n "s/.*[[:space:]]$1=\([^ ]*\).*/\1/p;s/^$1=\([^ ]*\).*/\1/p" | head -n 1; }
pbstime() { date -d "@$1" +%Y%m%d%H%M.%S; }

note "a window in 20 s over $N0"
out=$("$SC" create reservation ReservationName=maint StartTime=now+20 EndTime=now+45 Nodes="$N0" Flags=MAINT) ||
	fail "create the window: $out"
[ "$out" = "Reservation created: maint" ] || fail "create said '$out'"
show=$("$SC" show reservation maint -o)
[[ "$show" == *"Nodes=$N0 NodeCnt=1 "*"Flags=MAINT "*"State=INACTIVE"* ]] || fail "show reservation: $show"
"$QP_BIN/sinfo" -T | grep -qE "^maint +INACTIVE .* $N0\$" || fail "sinfo -T: $("$QP_BIN/sinfo" -T)"
blocker=$(as qpuser2 sbatch --parsable -w "$N1" -t 1 --export=QPOOL_SIM_RUNTIME=25 --wrap=true) || fail "sbatch blocker"
qp_wait "$blocker" running
short=$(as qpuser1 qsub -l walltime=10 <<<true) || fail "qsub short"
qp_wait "$short" running
[ "$(qp_field "$short" exec_host)" = "$N0" ] || fail "the 10 s job runs on $(qp_field "$short" exec_host), not $N0"
long=$(as qpuser1 qsub -l walltime=60 -v QPOOL_SIM_RUNTIME=1 <<<true) || fail "qsub long"
for i in $(seq 300); do
	[[ "$(qp_field "$long" comment)" == *"runs into maintenance at "* ]] && break
	sleep 0.05
done
c=$(qp_field "$long" comment)
[[ "$c" == *"runs into maintenance at "*" on $N0; with walltime <= 0:00:"*" it starts now"* ]] ||
	fail "the 60 s job's comment: '$c' ($(qp_state "$long"))"
r=$(as qpuser1 squeue -h -j "$long" -o %R)
[[ "$r" == "(ReqNodeNotAvail, runs into maintenance at "*" on $N0; with walltime <= "*" it starts now)" ]] ||
	fail "squeue's reason: '$r'"
[ "$(as qpuser1 squeue -h -j "$long" -o %r)" = ReqNodeNotAvail ] || fail "squeue %r: $(as qpuser1 squeue -h -j "$long" -o %r)"
note "the remedy holds: a job as short as it says starts on $N0 now"
w=$(sed 's/.*with walltime <= \([0-9:]*\) it starts now.*/\1/' <<<"$c")
secs=$(awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }' <<<"$w")
if [ "$secs" -gt 3 ]; then
	fits=$(as qpuser1 qsub -l walltime=$((secs - 2)) -v QPOOL_SIM_RUNTIME=1 <<<true) || fail "qsub the remedy"
	qp_wait "$fits" running completed
	[ "$(qp_field "$fits" exec_host)" = "$N0" ] || fail "the remedy's job ran on $(qp_field "$fits" exec_host)"
else
	note "only $w left before the window (a loaded host): the remedy is not tried"
fi
note "the 60 s job's estimate keeps out of the window: not before its end"
wend=$(epoch "$("$SC" show reservation maint -o | field EndTime)")
for i in $(seq 100); do
	st=$(as qpuser1 squeue -h -j "$long" -o %S)
	[ "$st" != N/A ] && [ -n "$st" ] && break
	sleep 0.05
done
[ "$(qp_state "$long")" != queued ] || { [ "$st" != N/A ] && [ "$(epoch "$st")" -ge "$wend" ]; } ||
	fail "the 60 s job's estimate '$st' is before the window's end ($(date -d "@$wend" +%T))"
[ "$(qp_state "$long")" = queued ] || fail "the 60 s job is $(qp_state "$long") before $N1 is free"
qp_wait "$long" running completed --timeout 40
[ "$(qp_field "$long" exec_host)" = "$N1" ] || fail "the 60 s job ran on $(qp_field "$long" exec_host), not $N1"
qp_wait "$long" completed
"$SC" delete ReservationName=maint || fail "delete maint"
[ "$(nres)" = 0 ] || fail "maint is still there: $("$SC" show reservation)"
"$SC" show reservation | grep -qx "No reservations in the system" || fail "show with none: $("$SC" show reservation)"

note "a user's reservation, the PBS way: only qpuser1's jobs there, and its jobs only there"
now=$(date +%s)
# 12 s ahead: the checks before its start run first (a loaded machine
# under the sanitizers took more than 4 s for them); each is asked only
# while the start is still ahead.
rstart=$((now + 12))
out=$(pbs_rsub -R "$(pbstime "$rstart")" -D 300 -l select=1:ncpus=1 -U qpuser1@localhost) ||
	fail "pbs_rsub: $out"
re='^R([0-9]+)\.[^[:space:]]+ CONFIRMED$'
[[ "$out" =~ $re ]] || fail "pbs_rsub printed '$out'"
R=R${BASH_REMATCH[1]}
full=$(pbs_rstat -f "$R")
grep -qx "queue = $R" <<<"$full" && grep -qx "Authorized_Users = qpuser1" <<<"$full" &&
	grep -qx "Resource_List.nodect = 1" <<<"$full" || fail "pbs_rstat -f: $full"
RN=$(sed -n 's/^resv_nodes = //p' <<<"$full")
[ "$RN" = "$N0" ] || [ "$RN" = "$N1" ] || fail "resv_nodes = '$RN'"
OTHER=$N0
[ "$RN" = "$N0" ] && OTHER=$N1
as qpuser1 pbs_rstat | grep -q "^$R\." || fail "qpuser1's pbs_rstat does not list $R: $(as qpuser1 pbs_rstat)"
[ -z "$(as qpuser2 pbs_rstat)" ] || fail "qpuser2 sees $R: $(as qpuser2 pbs_rstat)"
out=$(as qpuser2 qsub -q "$R" <<<true 2>&1) && fail "qpuser2 submitted to $R"
grep -q "Access denied to requested reservation" <<<"$out" || fail "qpuser2's qsub -q $R: '$out'"
out=$(as qpuser2 sbatch --reservation="$R" --wrap=true 2>&1) && fail "qpuser2 sbatch --reservation=$R"
[ "$out" = "sbatch: error: Batch job submission failed: Access denied to requested reservation" ] ||
	fail "qpuser2's sbatch --reservation: '$out'"
mine=$(as qpuser1 qsub -q "$R" -l walltime=20 -v QPOOL_SIM_RUNTIME=1 <<<true) || fail "qpuser1 qsub -q $R"
[ "$(qp_state "$mine")" = queued ] || [ "$(date +%s)" -ge "$rstart" ] ||
	fail "the reservation's job is $(qp_state "$mine") before its start"
[ "$(as qpuser1 squeue -h -j "$mine" -o %v)" = "$R" ] || fail "squeue %v: $(as qpuser1 squeue -h -j "$mine" -o %v)"
as qpuser1 scontrol show job "$mine" | grep -q " Reservation=$R\b" || fail "scontrol show job: $(as qpuser1 scontrol show job "$mine")"
for i in $(seq 60); do [[ "$(qp_field "$mine" comment)" == *"waits for reservation $R to start"* ]] && break; sleep 0.05; done
[[ "$(qp_field "$mine" comment)" == *"waits for reservation $R to start"* ]] || [ "$(date +%s)" -ge "$rstart" ] ||
	fail "before its start: '$(qp_field "$mine" comment)'"
qp_wait "$mine" running completed --timeout 40
[ "$(qp_field "$mine" exec_host)" = "$RN" ] || fail "the reservation's job ran on $(qp_field "$mine" exec_host)"
mine2=$(as qpuser1 sbatch --parsable --reservation="$R" -t 1 --export=QPOOL_SIM_RUNTIME=1 --wrap=true) || fail "sbatch --reservation"
qp_wait "$mine2" running completed
[ "$(qp_field "$mine2" exec_host)" = "$RN" ] || fail "sbatch --reservation's job ran on $(qp_field "$mine2" exec_host)"
arr=$(as qpuser1 sbatch --parsable --array=1-2 --reservation="$R" -t 1 --export=QPOOL_SIM_RUNTIME=1 --wrap=true) ||
	fail "sbatch --array --reservation"
for k in 1 2; do
	qp_wait "${arr}[$k]" completed --timeout 20
	[ "$(qp_field "${arr}[$k]" exec_host)" = "$RN" ] || fail "subjob $k of the array ran on $(qp_field "${arr}[$k]" exec_host)"
done
o1=$(as qpuser2 qsub -l walltime=100 <<<true) || fail "qsub o1"
o2=$(as qpuser2 qsub -l walltime=100 <<<true) || fail "qsub o2"
qp_wait "$o1" running
[ "$(qp_field "$o1" exec_host)" = "$OTHER" ] || fail "qpuser2's job runs on $(qp_field "$o1" exec_host), in $R"
for i in $(seq 60); do [ "$(as qpuser2 squeue -h -j "$o2" -o %r)" = Reservation ] && break; sleep 0.05; done
[ "$(as qpuser2 squeue -h -j "$o2" -o %r)" = Reservation ] || fail "o2's reason: $(as qpuser2 squeue -h -j "$o2" -o %R)"
[ "$(qp_state "$o2")" = queued ] || fail "qpuser2's second job is $(qp_state "$o2") with $RN reserved"
as qpuser2 qdel "$o1" "$o2" || fail "qdel"
pbs_rdel "$R.$(hostname)" || fail "pbs_rdel $R"
[ "$(nres)" = 0 ] || fail "$R is still there"

note "standing reservations move to their next day"
out=$("$SC" create reservation ReservationName=daily StartTime=now+2 EndTime=now+4 Nodes="$N1" Users=qpuser1 Flags=DAILY) ||
	fail "create daily: $out"
s0=$(epoch "$("$SC" show reservation daily -o | field StartTime)")
now=$(date +%s)
out=$(pbs_rsub -N pdaily -R "$(pbstime $((now + 2)))" -D 2 --hosts "$N0" -r "FREQ=DAILY;COUNT=2") || fail "pbs_rsub -r: $out"
full=$(pbs_rstat -f pdaily)
grep -qx "reserve_rrule = FREQ=DAILY;COUNT=2" <<<"$full" || fail "pbs_rstat -f of a standing one: $full"
for i in $(seq 200); do
	s1=$(epoch "$("$SC" show reservation daily -o | field StartTime)")
	[ "$s1" != "$s0" ] && break
	sleep 0.05
done
[ "$s1" = $((s0 + 86400)) ] || fail "daily's next start: $s1, not $((s0 + 86400))"
for i in $(seq 100); do grep -qx "reserve_rrule = FREQ=DAILY;COUNT=1" <<<"$(pbs_rstat -f pdaily)" && break; sleep 0.05; done
grep -qx "reserve_rrule = FREQ=DAILY;COUNT=1" <<<"$(pbs_rstat -f pdaily)" || fail "pdaily after its first: $(pbs_rstat -f pdaily)"

note "bad input: one line in the dialect's words, nothing made"
before=$(nres)
bad() {  # EXPECTED CMD...
	local want=$1 got
	shift
	got=$("$@" 2>&1) && fail "$* was taken: $got"
	[[ "$got" == *"$want"* ]] || fail "$*: '$got', expected '$want'"
	[ "$(wc -l <<<"$got")" = 1 ] || fail "$*: more than one line: $got"
}
bad "StartTime is in the past" "$SC" create reservation ReservationName=x StartTime=now-100 Duration=10 Nodes="$N0" Flags=MAINT
bad "EndTime is not after StartTime" "$SC" create reservation ReservationName=x StartTime=now+100 EndTime=now+50 Nodes="$N0" Flags=MAINT
bad "Invalid node name specified: nosuchnode" "$SC" create reservation ReservationName=x StartTime=now+100 Duration=10 Nodes=nosuchnode Flags=MAINT
bad "Requested nodes are busy: reservation daily" "$SC" create reservation ReservationName=x StartTime="$(date -d "@$((s1 + 1))" +%Y-%m-%dT%H:%M:%S)" Duration=10 Nodes="$N1" Users=qpuser1
bad "Invalid flag: BOGUS" "$SC" create reservation ReservationName=x StartTime=now+100 Duration=10 Nodes="$N0" Flags=BOGUS
bad "only root may change reservations" as qpuser1 "$SC" create reservation ReservationName=x StartTime=now+100 Duration=10 Nodes="$N0" Users=qpuser1
bad "Undefined iCalendar syntax" pbs_rsub -R "$(pbstime $(($(date +%s) + 100)))" -D 10 -l select=1 -U qpuser1 -r "FREQ=MONTHLY;COUNT=2"
bad "Requested reservation is invalid" as qpuser1 sbatch --reservation=nosuch --wrap=true
[ "$(nres)" = "$before" ] || fail "bad input made reservations: $before -> $(nres)"

note "a window over a running job: refused with the job named, or made to requeue it at its start"
"$SC" delete ReservationName=daily || fail "delete daily"
run=$(as qpuser2 sbatch --parsable -t 2 --export=QPOOL_SIM_RUNTIME=100 --wrap=true) || fail "sbatch run"
qp_wait "$run" running
ON=$(qp_field "$run" exec_host)
OFF=$N0
[ "$ON" = "$N0" ] && OFF=$N1
bad "running jobs would cross its start: $run ($ON" "$SC" create reservation ReservationName=m2 StartTime=now+4 EndTime=now+60 Nodes="$ON" Flags=MAINT
out=$("$SC" create reservation ReservationName=m2 StartTime=now+4 EndTime=now+60 Nodes="$ON" Flags=MAINT,REQUEUE) ||
	fail "the window with REQUEUE: $out"
for i in $(seq 300); do grep -q "job $run requeued for reservation m2" "$QP_T/qpoold.log" && break; sleep 0.05; done
grep -q "job $run requeued for reservation m2" "$QP_T/qpoold.log" || fail "job $run was not requeued at m2's start ($(qp_state "$run"))"
for i in $(seq 200); do [ "$(qp_state "$run")" = running ] && [ "$(qp_field "$run" exec_host)" = "$OFF" ] && break; sleep 0.05; done
[ "$(qp_field "$run" exec_host)" = "$OFF" ] || fail "the requeued job is $(qp_state "$run") on $(qp_field "$run" exec_host)"
"$SC" create reservation ReservationName=m3 StartTime=now+30 EndTime=now+60 Nodes="$OFF" Flags=MAINT,IGNORE_JOBS >/dev/null ||
	fail "IGNORE_JOBS over a running job"
as qpuser2 qdel "$run"

note "scontrol update reservation"
e0=$(epoch "$("$SC" show reservation m3 -o | field EndTime)")
out=$("$SC" update ReservationName=m3 EndTime="$(date -d "@$((e0 + 600))" +%Y-%m-%dT%H:%M:%S)") || fail "update m3: $out"
[ "$out" = "Reservation updated." ] || fail "update said '$out'"
[ "$(epoch "$("$SC" show reservation m3 -o | field EndTime)")" = $((e0 + 600)) ] || fail "m3's end after update: $("$SC" show reservation m3 -o)"
bad "Reservation nosuch not found" "$SC" update ReservationName=nosuch Duration=5
bad "EndTime is not after StartTime" "$SC" update ReservationName=m3 EndTime=now+1

note "kept across a qpoold restart"
want=$("$SC" show reservation -o | sort)
qp_stop "$QP_SERVER_PID"
qp_start_server
[ "$("$SC" show reservation -o | sed 's/State=[A-Z]*//' | sort)" = "$(sed 's/State=[A-Z]*//' <<<"$want")" ] ||
	fail "after a restart: $("$SC" show reservation -o) (before: $want)"
grep -q "^m2 " <<<"$("$QP_BIN/sinfo" -hT)" || fail "sinfo -hT after restart: $("$QP_BIN/sinfo" -hT)"
echo "reservations ok"
