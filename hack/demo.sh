#!/usr/bin/env bash
# A scripted walk through the operator's whole lifecycle on a local cluster,
# readable as it runs and strict: it exits non-zero as soon as a step does not
# happen, so it doubles as an end-to-end test. `make demo` runs it after
# building bin/ and the control plane; it takes under a minute.
set -euo pipefail

cd "$(dirname "$0")/.."
state=.local/demo
sim_addr=127.0.0.1:18090
sim="http://${sim_addr}"
token=demotoken
kubectl_bin="${KUBECTL:?KUBECTL must name a kubectl binary (make demo sets it)}"
export KUBECONFIG="$PWD/${state}/kubeconfig"

bold=$'\033[1m' green=$'\033[32m' red=$'\033[31m' reset=$'\033[0m'
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$reset"; }
ok() { printf '%s    ok: %s%s\n' "$green" "$*" "$reset"; }
fail() { printf '%s    FAILED: %s%s\n' "$red" "$*" "$reset" >&2; exit 1; }
# show prints a command and runs it, so the reader sees what was done.
show() { printf '    $ %s\n' "$*"; "$@" 2>&1 | sed 's/^/      /'; }
kubectl() { "$kubectl_bin" "$@"; }
curl_sim() { curl -fsS -H "Authorization: Bearer ${token}" "$@"; }
# wait_for DESCRIPTION TIMEOUT_SECONDS COMMAND... retries COMMAND until it
# succeeds, or fails the demo.
wait_for() {
  local what=$1 timeout=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "$what (waited ${timeout}s)"
    sleep 0.5
  done
  ok "$what"
}
jsonpath() { kubectl get "$1" -o "jsonpath=$2" 2>/dev/null; }
equals() { [[ "$(jsonpath "$1" "$2")" == "$3" ]]; }
dns_record_state() { curl_sim "${sim}/dns/v1/records/web.example.com" | grep -q "\"state\": *\"$1\""; }
# no_dns_record and gone succeed only on a definite "not found": an
# unreachable simulator or API server must not pass for a deletion.
no_dns_record() {
  [[ "$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${token}" \
    "${sim}/dns/v1/records/web.example.com")" == 404 ]]
}
gone() {
  local out
  out=$(kubectl get "$1" --ignore-not-found -o name) || return 1
  [[ -z "$out" ]]
}
has_finalizer() { [[ "$(jsonpath "$1" '{.metadata.finalizers}')" == *"$2"* ]]; }
children_gone() { gone deployment/web && gone service/web && gone ingress/web; }

devenv_pid=""
poller_pid=""
cleanup() {
  if [[ -n "$poller_pid" ]]; then
    kill "$poller_pid" 2>/dev/null || true
  fi
  if [[ -n "$devenv_pid" ]]; then
    kill -INT "$devenv_pid" 2>/dev/null || true
    wait "$devenv_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

start=$SECONDS
step "Starting a local cluster, the simulator and the operator (log: ${state}/operator.log)"
mkdir -p "$state"
rm -f "${state}/kubeconfig"
bin/devenv --local --state-dir "$state" --simulator-addr "$sim_addr" --token "$token" --manager bin/manager \
  >"${state}/operator.log" 2>&1 &
devenv_pid=$!
wait_for "the operator is running" 60 grep -q '"worker count"\|worker count' "${state}/operator.log"

step "1. A MyApp becomes Ready, with its children and an ACTIVE DNS record"
show kubectl apply -f config/samples/apps_v1alpha1_myapp.yaml
wait_for "MyApp web is Ready" 60 kubectl wait --for=condition=Ready myapp/web --timeout=1s
show kubectl get myapps
show kubectl get deployment,service,ingress -l app.kubernetes.io/instance=web
wait_for "the record web.example.com is ACTIVE in the DNS service" 10 dns_record_state ACTIVE
show curl_sim "${sim}/dns/v1/records/web.example.com"

step "2. A replica edit is reverted"
show kubectl scale deployment web --replicas=5
wait_for "the Deployment is back to the MyApp's 2 replicas" 20 equals deployment/web '{.spec.replicas}' 2

step "3. A BackupConfig backs the app up when its image changes"
show kubectl apply -f config/samples/backup_v1alpha1_backupconfig.yaml
wait_for "BackupConfig web-nightly is Ready" 30 kubectl wait --for=condition=Ready backupconfig/web-nightly --timeout=1s
show kubectl patch myapp web --type=merge -p '{"spec":{"image":"nginx:1.28"}}'
app_generation=$(jsonpath myapp/web '{.metadata.generation}')
wait_for "a backup of generation ${app_generation} succeeded" 60 \
  equals backupconfig/web-nightly '{.status.observedAppGeneration}/{.status.lastBackup.phase}' "${app_generation}/Succeeded"
show kubectl get backupconfigs
show curl_sim "${sim}/backup/v1/backups"

step "4. The DNS service goes down, and the MyApp is deleted: the finalizer holds"
# Final backups from now on run for 20s, so step 5 can show that the
# final-backup finalizer alone holds the MyApp after its DNS cleanup is done.
show curl_sim -X PATCH "${sim}/admin/v1/settings" -d '{"backupDuration": "20s"}'
show curl_sim -X PUT "${sim}/admin/v1/outages/dns" -d '{"down": true}'
show kubectl delete myapp web --wait=false
wait_for "DNSReady says the service is unavailable" 30 \
  equals myapp/web '{.status.conditions[?(@.type=="DNSReady")].reason}' DNSServiceUnavailable
show kubectl get myapp web -o 'jsonpath={range .status.conditions[*]}{.type}: {.reason}: {.message}{"\n"}{end}'
sleep 3
has_finalizer myapp/web apps.myapp.dev/dns-cleanup || fail "the DNS cleanup finalizer went while its record could not be deleted"
ok "the MyApp is still there, held by its finalizers: $(jsonpath myapp/web '{.metadata.finalizers}')"

step "5. The service returns: the record is removed, a final backup is taken, the children are garbage-collected"
show curl_sim -X PUT "${sim}/admin/v1/outages/dns" -d '{"down": false}'
wait_for "the record web.example.com is gone from the DNS service" 30 no_dns_record
wait_for "the DNS cleanup finalizer is released" 30 eval '! has_finalizer myapp/web apps.myapp.dev/dns-cleanup'
has_finalizer myapp/web backup.myapp.dev/final-backup || fail "the MyApp was released before its final backup finished"
equals backupconfig/web-nightly '{.status.conditions[?(@.type=="Ready")].reason}' FinalBackupInProgress ||
  fail "the BackupConfig does not say the final backup is in progress"
ok "the final backup is running, and its finalizer alone holds the MyApp"
show kubectl get backupconfig web-nightly -o 'jsonpath={range .status.conditions[*]}{.type}: {.reason}: {.message}{"\n"}{end}'
wait_for "the MyApp is gone" 60 gone myapp/web
equals backupconfig/web-nightly '{.status.lastBackup.trigger}/{.status.lastBackup.phase}' AppDeletion/Succeeded ||
  fail "the MyApp went before its final backup succeeded"
ok "the final backup succeeded before the MyApp went"
wait_for "the Deployment, Service and Ingress are garbage-collected" 30 children_gone
show kubectl get backupconfigs

step "6. A MyApp deleted with deletionPolicy: Orphan is restored: its name resolves throughout"
show curl_sim -X PATCH "${sim}/admin/v1/settings" -d '{"backupDuration": "1s"}'
show kubectl apply -f config/samples/apps_v1alpha1_myapp.yaml
show kubectl patch myapp web --type=merge -p '{"spec":{"deletionPolicy":"Orphan"}}'
wait_for "MyApp web is Ready again" 60 kubectl wait --for=condition=Ready myapp/web --timeout=1s
old_uid=$(jsonpath myapp/web '{.metadata.uid}')
wait_for "the record web.example.com is ACTIVE, marked orphaned (deletionPolicy Orphan)" 20 \
  eval 'curl_sim "${sim}/dns/v1/records/web.example.com" | grep -q "myapp-operator-orphaned/.*/${old_uid}"'
wait_for "a backup of this MyApp succeeded" 60 \
  equals backupconfig/web-nightly '{.status.observedAppUID}/{.status.lastBackup.phase}' "${old_uid}/Succeeded"
# A resolver's view: the record polled every 100 ms from now until the
# restored MyApp holds it; every answer that is not ACTIVE is a miss.
: >"${state}/dns-polls"
: >"${state}/dns-misses"
(
  while :; do
    if dns_record_state ACTIVE; then echo ok >>"${state}/dns-polls"; else date +%T.%N >>"${state}/dns-misses"; fi
    sleep 0.1
  done
) &
poller_pid=$!
show kubectl delete myapp web
wait_for "the MyApp is gone, its record left in place" 60 gone myapp/web
dns_record_state ACTIVE || fail "the record went with the MyApp although deletionPolicy is Orphan"
show kubectl apply -f config/samples/restore/backup_v1alpha1_restore.yaml
wait_for "Restore web-restore succeeded" 90 equals restore/web-restore '{.status.phase}' Succeeded
new_uid=$(jsonpath myapp/web '{.metadata.uid}')
[[ -n "$new_uid" && "$new_uid" != "$old_uid" ]] || fail "the Restore did not create a new MyApp web"
wait_for "the restored MyApp holds the record (taken over, owner .../${new_uid})" 20 \
  eval 'curl_sim "${sim}/dns/v1/records/web.example.com" | grep -q "/${new_uid}\""'
kill "$poller_pid" 2>/dev/null || true
wait "$poller_pid" 2>/dev/null || true
polls=$(wc -l <"${state}/dns-polls")
misses=$(wc -l <"${state}/dns-misses")
((misses == 0)) || fail "web.example.com did not resolve at ${misses} of $((polls + misses)) polls: $(head -3 "${state}/dns-misses" | tr '\n' ' ')"
((polls > 10)) || fail "the name was polled only ${polls} times"
ok "web.example.com was ACTIVE at all ${polls} polls, 100 ms apart, through the deletion and the restore"
show kubectl get restores
show kubectl get myapp web -o 'jsonpath={.metadata.annotations}{"\n"}'

step "Demo passed in $((SECONDS - start))s"
