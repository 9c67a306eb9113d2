#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Accounts (docs/ACCOUNTS.md), as Slurm's sacctmgr makes them: root adds
# accounts and users (the first account a user gets is its default), a
# user may not; a job's -A / --account names one the user is in, else the
# user's default is recorded; a user in no account, or asking one it is not
# in, is refused in Slurm's words with no job made; sacctmgr show lists
# them as Slurm prints; modify and delete; all of it kept across a qpoold
# restart. A pool with no account checks nothing (every other test).
# QP_STORE=postgresql: the same on PostgreSQL (t-accounts-pg.sh).
. "$(dirname "$0")/lib.sh"
qp_setup
note "store: $(sed -n 's/^store = //p' "$QPOOL_CONF" | tail -n 1)"
qp_start_server
qp_start_node a1 0
W=$QP_T/work/qpuser1
njobs() { "$QP_BIN/qstat" -x --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
SM=$QP_BIN/sacctmgr

note "no accounts: nothing checked"
id=$(as qpuser1 sbatch --parsable -A anything -o /dev/null --wrap=true) || fail "sbatch -A with no accounts: $id"
qp_wait "$id" completed

note "root adds accounts and users; a user may not"
"$SM" -i add account physics Description="Physics dept" Fairshare=40 || fail "add account physics"
"$SM" -i add account chem Fairshare=60 || fail "add account chem"
"$SM" -i add account theory Parent=physics || fail "add account theory"
"$SM" -i add user qpuser1 Account=physics,theory || fail "add user qpuser1"
"$SM" -i add user qpuser2 Account=chem || fail "add user qpuser2"
out=$(as qpuser1 "$SM" -i add account mine 2>&1) && fail "a user added an account: $out"
[ "$out" = "sacctmgr: error: Your user doesn't have privilege to perform this action" ] || fail "a user's add: '$out'"
out=$("$SM" -i add account physics 2>&1) && fail "physics added twice"
grep -q "exists already" <<<"$out" || fail "a second add of physics: '$out'"
out=$("$SM" -i add user nosuchuser-qp Account=physics 2>&1) && fail "an unknown user added"
out=$("$SM" -i add user qpuser1 Account=nosuch 2>&1) && fail "a user added to an unknown account"
out=$("$SM" -i add account bad Fairshare=-3 2>&1) && fail "a negative share taken"
[ "$out" = "sacctmgr: error: Invalid Fairshare value: -3" ] || fail "negative share: '$out'"
out=$("$SM" -i modify account physics set Parent=theory 2>&1) && fail "a parent loop taken"
grep -q "its own ancestor" <<<"$out" || fail "parent loop: '$out'"

note "sacctmgr show, as Slurm prints (and as Open OnDemand asks)"
[ "$("$SM" -nP show account format=account,descr,parentname,share)" = "chem|chem|root|60
physics|Physics dept|root|40
theory|theory|physics|1" ] || fail "show account: $("$SM" -nP show account format=account,descr,parentname,share)"
[ "$(as qpuser1 "$SM" -nP show users withassoc format=account,qos where user=qpuser1)" = "physics|normal
theory|normal" ] || fail "show users withassoc for qpuser1: $(as qpuser1 "$SM" -nP show users withassoc format=account,qos where user=qpuser1)"
[ "$("$SM" -nP show user format=user,defaultaccount)" = "qpuser2|chem
qpuser1|physics" ] && true
"$SM" -nP show user format=user,defaultaccount | sort > "$QP_T/users.txt"
[ "$(cat "$QP_T/users.txt")" = "qpuser1|physics
qpuser2|chem" ] || fail "show user: $(cat "$QP_T/users.txt")"
"$SM" -nP show assoc format=account,user | grep -qx "chem|qpuser2" || fail "show assoc: $("$SM" -nP show assoc format=account,user)"

note "jobs: the default account recorded, a member's account taken, others refused with no job"
id=$(as qpuser1 sbatch --parsable -o /dev/null --wrap=true) || fail "sbatch without -A: $id"
[ "$(qp_field "$id" Account_Name)" = physics ] || fail "default account: '$(qp_field "$id" Account_Name)'"
id=$(as qpuser1 qsub -A theory -o /dev/null -e /dev/null <<<true) || fail "qsub -A theory: $id"
[ "$(qp_field "$id" Account_Name)" = theory ] || fail "qsub -A theory recorded '$(qp_field "$id" Account_Name)'"
before=$(njobs)
out=$(as qpuser1 sbatch --parsable -A chem -o /dev/null --wrap=true 2>&1) && fail "qpuser1 ran under chem"
[ "$out" = "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified" ] ||
	fail "sbatch -A chem: '$out'"
out=$(as qpuser2 qsub -A physics -o /dev/null -e /dev/null <<<true 2>&1) && fail "qpuser2 ran under physics"
grep -q "Invalid account or account/partition combination specified" <<<"$out" || fail "qsub -A physics: '$out'"
out=$(as qpuser3 sbatch --parsable -o /dev/null --wrap=true 2>&1) && fail "a user in no account ran"
grep -q "Invalid account" <<<"$out" || fail "a user in no account: '$out'"
[ "$(njobs)" = "$before" ] || fail "refused submissions made jobs: $before -> $(njobs)"

note "qmgr's forms of the same"
"$QP_BIN/qmgr" -c "create account bio; set account bio shares = 5; set account bio add_user = qpuser3" ||
	fail "qmgr create account bio"
out=$("$QP_BIN/qmgr" -c "list account bio")
grep -qx "    shares = 5" <<<"$out" && grep -qx "    users = qpuser3" <<<"$out" &&
	grep -qx "    default_users = qpuser3" <<<"$out" || fail "qmgr list account bio: $out"
id=$(as qpuser3 sbatch --parsable -o /dev/null --wrap=true) || fail "qpuser3 after qmgr add_user: $id"
[ "$(qp_field "$id" Account_Name)" = bio ] || fail "qpuser3's default: '$(qp_field "$id" Account_Name)'"
out=$(as qpuser3 "$QP_BIN/qmgr" -c "create account mine" 2>&1) && fail "a user created an account with qmgr"
"$QP_BIN/qmgr" -c "set account bio remove_user = qpuser3" || fail "qmgr remove_user"
out=$(as qpuser3 sbatch --parsable -o /dev/null --wrap=true 2>&1) && fail "qpuser3 ran after remove_user"
out=$("$QP_BIN/qmgr" -c "set account bio colour = red" 2>&1) && fail "qmgr took an unknown attribute"

note "modify and delete; kept across a qpoold restart"
"$SM" -i modify user qpuser1 set DefaultAccount=theory || fail "modify user DefaultAccount"
"$SM" -i modify account chem set Fairshare=70 Description=Chemistry || fail "modify account chem"
"$SM" -i delete user qpuser1 Account=physics || fail "delete user qpuser1 from physics"
out=$("$SM" -i delete account physics 2>&1) && fail "physics deleted with a sub-account"
grep -q "sub-account theory" <<<"$out" || fail "delete physics: '$out'"
qp_stop "$QP_SERVER_PID"
qp_start_server
[ "$("$SM" -nP show account where name=chem format=account,descr,share)" = "chem|Chemistry|70" ] ||
	fail "chem after a restart: $("$SM" -nP show account where name=chem format=account,descr,share)"
[ "$(as qpuser1 "$SM" -nP show users withassoc format=account where user=qpuser1)" = "theory" ] ||
	fail "qpuser1's accounts after a restart: $(as qpuser1 "$SM" -nP show users withassoc format=account where user=qpuser1)"
id=$(as qpuser1 sbatch --parsable -o /dev/null --wrap=true) || fail "sbatch after a restart: $id"
[ "$(qp_field "$id" Account_Name)" = theory ] || fail "default after modify and restart: '$(qp_field "$id" Account_Name)'"
out=$(as qpuser1 sbatch --parsable -A physics -o /dev/null --wrap=true 2>&1) && fail "qpuser1 still in physics"
qp_wait "$id" completed
echo PASS
