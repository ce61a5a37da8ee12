#!/usr/bin/env bash
# homefleet host agent: reports this Proxmox VE host to homefleet and runs the commands it answers.
# Installed by install-agent.sh as a systemd service; usage() below says how it is called.
#
# Heartbeat: POST /api/agent/heartbeat every heartbeat_interval_s the server answers (bounded).
# Commands in the answer: {"type":"uninstall","operation_id","receipt_token"} removes the agent and
# confirms with the receipt token until the server takes it; {"type":"upgrade","version"} verifies
# the signed manifest (not issued before the newest one seen) and the file's SHA-256 and size
# (an older version only when the command says "rollback":true), installs it keeping the previous version,
# starts the watchdog (a separate systemd unit running the PREVIOUS copy, so it is not the process
# being replaced) and restarts into the new version. The watchdog puts the previous version back
# when the new one has not heartbeated successfully within HOMEFLEET_UPGRADE_TIMEOUT_S (300).
#
# Guests come from `pvesh get /nodes/<node>/qemu|lxc --output-format json`. Every JSON this agent
# reads (those lists, the server's answers, the release manifest) is decoded by perl's JSON::PP
# (lib/common.sh json_parse), never matched with patterns; a value is used only when it has the
# type it should and matches a strict pattern.
#
# Guest control: beside the heartbeat timer a second loop long-polls GET /api/agent/commands?wait=25
# (homefleet never connects to a host). A {"type":"guest.action"} command runs qm or pct (as the
# guest's own type says) with one fixed verb and an argument list this script builds itself from
# fields that must match strict patterns, only for a vmid its own last heartbeat listed, under the
# verb's time limit; nothing from the server passes through a shell or eval. A command with a field
# of the wrong type is refused whole. {"type":"logs"} sends the last 200 lines of this agent's
# journal (at most 64 KiB, cut at a line). {"type":"deploy"} makes a guest (qm clone, pct clone or
# pct create, then its settings, disk and start; a rebuild stops and destroys the guest first), every
# field checked before anything runs, the half-made guest destroyed when a step fails. Each result goes to POST /api/agent/operations/<id>/result
# (retried). Guest configs (qm/pct config, redacted: the value of cipassword and of any key holding
# password, secret or token becomes **REDACTED**, and so does such a key=value pair inside args and
# lxc.* values) are hashed into the heartbeat and uploaded to POST /api/agent/guest-configs when
# their hash changes.
#
# Host storage: the heartbeat carries the node's enabled storages (`pvesh get /nodes/<node>/storage`)
# and storage_sha256, the hash of the volumes of content iso, vztmpl, snippets and import on its
# active storages (`pvesh get .../storage/<storage>/content`, listed again only when a storage's
# used bytes changed, at most once a minute, or every 10 minutes); each storage whose volumes
# changed is sent to POST /api/agent/storage. {"type":"download"} runs `pvesh create
# /nodes/<node>/storage/<storage>/download-url` and reports the task's exit status;
# {"type":"upload"} fetches a cached file from GET /api/agent/files/<id> (resuming with Range),
# checks its size and SHA-256 and renames it into the storage's folder (`pvesm path`).
#
# Backups: the cluster's backup jobs that run on this node (`pvesh get /cluster/backup`, pools read
# with `pvesh get /pools/<pool>`) and the newest 10 backups of each guest on the active storages
# holding content backup are sent to POST /api/agent/backups when they changed, at most every
# HOMEFLEET_BACKUPS_MIN_S, unless the heartbeat answer turns the collector off.
#
# Scripts: {"type":"script"} runs `<interpreter> -s` with the body (its SHA-256 checked) on standard
# input: on the host only when installed with --allow-scripts (<state>/allow_scripts; heartbeats say
# allows_scripts), else it fails with "scripts are not allowed on this host"; in a container
# `pct exec <vmid> -- <interpreter> -s`; in a VM `qm guest exec <vmid> --pass-stdin 1 --timeout N --
# <interpreter> -s`; within timeout_s.
# Collectors: the heartbeat answer's "collectors" turns metrics, configs, storage and backups on or
# off for this host (kept in the state folder); one that is off makes none of its calls.
#
# A server that is down, slow or answers garbage is logged and retried at the next interval: every
# curl is bounded by --connect-timeout and --max-time, and the loop never exits on such errors.
#
# Variables for tests (the systemd unit sets none): HOMEFLEET_INTERVAL_MIN_S (10),
# HOMEFLEET_CURL_MAX_TIME (20), HOMEFLEET_CONNECT_TIMEOUT (5), HOMEFLEET_UPGRADE_TIMEOUT_S (300),
# HOMEFLEET_RECEIPT_DEADLINE_S (604800: the receipt token's lifetime), HOMEFLEET_RECEIPT_MAX_DELAY_S (600),
# HOMEFLEET_POLL_WAIT_S (25: the command poll's wait), HOMEFLEET_RESULT_TRIES (8),
# HOMEFLEET_VOLUMES_MIN_S (60: the least time between two listings of a storage's volumes),
# HOMEFLEET_STALL_S (60: a file transfer under 1 KiB/s this long is broken off and resumed),
# HOMEFLEET_BACKUPS_MIN_S (300: the least time between two listings of the backups).

HOMEFLEET_AGENT_VERSION="1.0.0"

set -euo pipefail
umask 077

readonly AGENT_UNIT=homefleet-agent.service
readonly WATCHDOG_UNIT=homefleet-agent-watchdog.service
readonly INTERVAL_DEFAULT=30 INTERVAL_MAX=3600
readonly MAX_ANSWER_BYTES=1048576 MAX_DOWNLOAD_BYTES=4194304
# What the server keeps of a result's output.
readonly MAX_OUTPUT_BYTES=65536

# The helpers this agent shares with its installer; the controller serves them inlined here.
# shellcheck source=reporter/lib/json-string.sh
source "${BASH_SOURCE[0]%/*}/lib/json-string.sh" # homefleet:include
# shellcheck source=reporter/lib/common.sh
source "${BASH_SOURCE[0]%/*}/lib/common.sh" # homefleet:include

usage() {
  cat <<'USAGE'
Usage: host-agent.sh [--once] [--root DIR]
       host-agent.sh --watchdog [--root DIR]
       host-agent.sh --repin SHA256 [--root DIR]
       host-agent.sh --version | --help

The homefleet host agent. It reports this Proxmox VE host (its addresses, metrics and guests) to
the homefleet controller and runs the commands the controller answers with: guest actions (qm/pct
start, shutdown, stop, reboot, snapshot, rollback, clone, destroy), deploys, downloads and file
uploads onto its storages, scripts, log requests, agent upgrades and its own removal. install-agent.sh installs it as the systemd service homefleet-agent.service,
which runs it without options; it is rarely run by hand.

  (no option)     heartbeat every interval the controller answers, and long-poll for commands
  --once          one heartbeat and the commands in its answer, then exit (0: the controller took
                  the heartbeat; 75: it did not)
  --watchdog      the upgrade watchdog, started in its own systemd unit during an upgrade: restores
                  the previous version when the new one has not heartbeated within 5 minutes
  --repin SHA256  pin the controller's re-issued certificate key (run as root): the SHA-256 of its
                  public key, base64 as the dashboard shows it (sha256//<base64> or <base64>) or 64
                  hex digits; restarts the service to use it
  --root DIR      keep state and files under DIR instead of / (tests)
  --version       print this agent's version
  -h, --help      print this text

State, mode 0600, in <root>/etc/homefleet-agent/: server_url, host_token, manifest_public_key.pem,
tls_pin (optional), manifest_issued_at, allow_scripts (only when installed with --allow-scripts), collectors (which ones the controller last turned on or off). Needs bash, curl, coreutils, openssl, perl with JSON::PP,
and the node's own pvesh, pvesm, qm, pct and pveversion (all part of Proxmox VE).
USAGE
}

ORIGINAL_ARGS=("$@")
ONCE=0
MODE=run
ROOT=/
REPIN=''
while (($# > 0)); do
  case "$1" in
    --once) ONCE=1 ;;
    --watchdog) MODE=watchdog ;;
    --repin)
      [[ $# -ge 2 && -n "$2" ]] || { echo "homefleet-agent: --repin needs the SHA-256 of the controller's certificate key" >&2; exit 2; }
      MODE=repin
      REPIN="$2"
      shift
      ;;
    --root)
      [[ $# -ge 2 && -n "$2" ]] || { echo "homefleet-agent: --root needs a directory" >&2; exit 2; }
      ROOT="$2"
      shift
      ;;
    --version) echo "$HOMEFLEET_AGENT_VERSION"; exit 0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "homefleet-agent: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# Every path is under --root, so tests install into a temp folder.
PREFIX="${ROOT%/}"
STATE_DIR="$PREFIX/etc/homefleet-agent"
LIB_DIR="$PREFIX/usr/local/lib/homefleet-agent"
UNIT_DIR="$PREFIX/etc/systemd/system"
AGENT_FILE="$LIB_DIR/host-agent.sh"
PREVIOUS_FILE="$LIB_DIR/host-agent.sh.previous"
UPGRADE_FILE="$STATE_DIR/upgrade"
UPGRADE_OK_FILE="$STATE_DIR/upgrade.ok"
UPGRADE_FAILED_FILE="$STATE_DIR/upgrade.failed"
ISSUED_FILE="$STATE_DIR/manifest_issued_at"
# A version the watchdog rolled back is not tried again for this long: the controller marks the
# upgrade failed after the same 5 minutes, and until it has, it may still offer it.
readonly UPGRADE_RETRY_BLOCK_S=600

log() { printf 'homefleet-agent: %s\n' "$*" >&2; }

# Private folders made with mktemp -d (never a name beside one: a guessable name in /tmp is a
# symlink race), removed on exit.
TEMP_DIRS=()
private_dir() {
  local made
  made="$(mktemp -d "$1")" || return 1
  TEMP_DIRS+=("$made")
  REPLY="$made"
}
# Stops the command loop and every process under it, as systemd's stop would: the long poll's curl
# runs in a subshell of the loop (its $(...)), and left behind it would go on for up to a poll's
# wait, writing into the work folder while it is removed, holding the agent's output open, and
# after an upgrade taking commands from the server beside the new agent's own poll.
POLL_PID=''
stop_command_loop() {
  [[ -n "$POLL_PID" ]] || return 0
  end_tree "$POLL_PID"
  POLL_PID=''
}
# Ends process $1 and the processes under it, each held still (SIGSTOP) before its children are
# listed, so none starts another in between; without pgrep (procps), $1 alone.
end_tree() {
  local child
  kill -STOP "$1" 2>/dev/null || return 0
  if command -v pgrep >/dev/null 2>&1; then
    while read -r child; do end_tree "$child"; done < <(pgrep -P "$1" 2>/dev/null || true)
  fi
  kill -TERM "$1" 2>/dev/null || true
  kill -CONT "$1" 2>/dev/null || true
}
# On exit: never changes the exit status (under set -e a failing command here would turn an
# `exit 0` into 1); a folder a late write kept from going is tried again for a second.
remove_temp_dirs() {
  local i
  for ((i = 0; i < 10; i++)); do
    rm -rf ${TEMP_DIRS[@]+"${TEMP_DIRS[@]}"} 2>/dev/null && return 0
    sleep 0.1
  done
}
trap 'stop_command_loop || true; remove_temp_dirs || true' EXIT

# A whole number from $1 within [$2, $3], else $4.
bounded_int() {
  local value="$1"
  if [[ "$value" =~ ^[0-9]{1,9}$ ]]; then
    value=$((10#$value))
    if ((value < $2)); then value=$2; fi
    if ((value > $3)); then value=$3; fi
    printf '%s' "$value"
  else
    printf '%s' "$4"
  fi
}

CURL_MAX_TIME="$(bounded_int "${HOMEFLEET_CURL_MAX_TIME:-}" 1 300 20)"
CONNECT_TIMEOUT="$(bounded_int "${HOMEFLEET_CONNECT_TIMEOUT:-}" 1 60 5)"
if ((CONNECT_TIMEOUT > CURL_MAX_TIME)); then CONNECT_TIMEOUT=$CURL_MAX_TIME; fi
INTERVAL_MIN="$(bounded_int "${HOMEFLEET_INTERVAL_MIN_S:-}" 1 60 10)"
UPGRADE_TIMEOUT="$(bounded_int "${HOMEFLEET_UPGRADE_TIMEOUT_S:-}" 1 3600 300)"
RECEIPT_DEADLINE="$(bounded_int "${HOMEFLEET_RECEIPT_DEADLINE_S:-}" 1 604800 604800)"
RECEIPT_MAX_DELAY="$(bounded_int "${HOMEFLEET_RECEIPT_MAX_DELAY_S:-}" 1 3600 600)"
POLL_WAIT="$(bounded_int "${HOMEFLEET_POLL_WAIT_S:-}" 0 30 25)"
RESULT_TRIES="$(bounded_int "${HOMEFLEET_RESULT_TRIES:-}" 1 20 8)"

# ---------------------------------------------------------------------------------------------
# HTTP

SERVER_URL=''
HOST_TOKEN=''
TLS_PIN=''

read_state_file() {
  local file="$STATE_DIR/$1" line=''
  [[ -r "$file" ]] || return 1
  IFS= read -r line <"$file" || [[ -n "$line" ]] || return 1
  printf '%s' "$line"
}

load_state() {
  SERVER_URL="$(read_state_file server_url)" || { log "not installed: $STATE_DIR/server_url is missing"; return 1; }
  HOST_TOKEN="$(read_state_file host_token)" || { log "not installed: $STATE_DIR/host_token is missing"; return 1; }
  TLS_PIN="$(read_state_file tls_pin 2>/dev/null)" || TLS_PIN=''
  SERVER_URL="${SERVER_URL%/}"
  [[ "$SERVER_URL" =~ ^https?://[^[:space:]]+$ ]] || { log "invalid server URL in $STATE_DIR/server_url"; return 1; }
  [[ "$HOST_TOKEN" =~ ^hfh_[A-Za-z0-9_-]{20,200}$ ]] || { log "invalid host token in $STATE_DIR/host_token"; return 1; }
  [[ -z "$TLS_PIN" || "$TLS_PIN" =~ ^sha256//[A-Za-z0-9+/]{43}=$ ]] || { log "invalid TLS pin in $STATE_DIR/tls_pin"; return 1; }
}

# Why the last request got no answer, from curl's exit status.
no_answer() {
  local repin="$AGENT_FILE${PREFIX:+ --root $PREFIX} --repin <sha256>"
  case "$CURL_EXIT" in
    90) printf "TLS pin mismatch: the certificate of %s does not match the pinned key %s. If the controller's certificate was re-issued with a new key, check its new fingerprint (the dashboard's install command shows it after --fingerprint) and re-pin as root: %s" "$SERVER_URL" "$TLS_PIN" "$repin" ;;
    35 | 51 | 53 | 54 | 58 | 59 | 60 | 64 | 66 | 77 | 80 | 82 | 83 | 91) printf 'the TLS connection to %s failed (curl exit %s): its certificate is not trusted or the handshake failed' "$SERVER_URL" "$CURL_EXIT" ;;
    28) printf 'the server at %s did not answer in time' "$SERVER_URL" ;;
    *) printf 'the server at %s did not answer' "$SERVER_URL" ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# Facts about this host

host_name() {
  local name=''
  if [[ -r "$PREFIX/etc/hostname" ]]; then IFS= read -r name <"$PREFIX/etc/hostname" || true; fi
  name="${name//[[:space:]]/}"
  if [[ -z "$name" ]]; then name="$(uname -n 2>/dev/null || true)"; fi
  printf '%s' "$name"
}

# "8.2.4" from `pve-manager/8.2.4/faa8... (running kernel: ...)`, '' when unknown.
hypervisor_version() {
  local out first v=''
  out="$(timeout 10 pveversion 2>/dev/null || true)"
  first="${out%%[[:space:]]*}"
  if [[ "$first" == */* ]]; then
    v="${first#*/}"
    v="${v%%/*}"
  fi
  [[ "$v" =~ ^[0-9A-Za-z.+~-]{1,64}$ ]] || v=''
  printf '%s' "$v"
}

# JSON array of this host's global addresses (without prefix length).
addresses_json() {
  local out line word take=0 json='' item
  out="$(timeout 10 ip -o addr show scope global 2>/dev/null || true)"
  while IFS= read -r line; do
    take=0
    for word in $line; do
      if ((take)); then
        word="${word%%/*}"
        if [[ "$word" =~ ^[0-9A-Fa-f.:]{2,45}$ ]]; then
          json_string "$word" item
          json+="${json:+,}$item"
        fi
        break
      fi
      if [[ "$word" == inet || "$word" == inet6 ]]; then take=1; fi
    done
  done <<<"$out"
  printf '[%s]' "$json"
}

# `"uptime_s":N,` from /proc/uptime, or nothing when it cannot be read (the field is optional).
uptime_field() {
  local up=''
  if [[ -r /proc/uptime ]]; then IFS=' .' read -r up _ </proc/uptime || true; fi
  if [[ "$up" =~ ^[0-9]{1,12}$ ]]; then printf '"uptime_s":%s,' "$((10#$up))"; fi
}

# Guests from one `pvesh get /nodes/<node>/qemu|lxc --output-format json` each ($1: this host's
# name, whose first label is the Proxmox node's name): vmid, name, status, template, lock and numbers
# all from the same object. PVE 6 writes numbers as strings ("vmid":"101", "disk":"1000"); both are read.
GUESTS_JSON=''
GUESTS_LIST=''
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A PVESH=()
collect_guests() {
  local node="${1%%.*}" type file count i vmid name status template lock field value metrics config
  local -A seen=()
  GUESTS_JSON=''
  GUESTS_LIST=''
  if command -v pvesh >/dev/null 2>&1 && [[ "$node" =~ ^[A-Za-z0-9_-]{1,63}$ ]]; then
    for type in qemu lxc; do
      file="$WORK_DIR/pvesh-$type.json"
      if ! timeout 30 pvesh get "/nodes/$node/$type" --output-format json >"$file" 2>/dev/null; then
        log "guests: pvesh get /nodes/$node/$type failed; its guests are left out of this heartbeat"
        continue
      fi
      if ! json_parse PVESH "$file" || ! json_get PVESH . a; then
        log "guests: pvesh get /nodes/$node/$type did not print a JSON list; its guests are left out of this heartbeat"
        continue
      fi
      count="$REPLY"
      for ((i = 0; i < count; i++)); do
        { json_get PVESH "$i.vmid" ns && [[ "$REPLY" =~ ^[1-9][0-9]{0,14}$ ]]; } || continue
        vmid="$REPLY"
        [[ -z "${seen[$vmid]-}" ]] || continue
        seen[$vmid]=1
        name=''
        if json_get PVESH "$i.name" sn; then name="$REPLY"; fi
        # The controller refuses a name with control characters or markup (and the whole heartbeat with it).
        if [[ "$name" == *[[:cntrl:]\<\>]* ]]; then name=''; fi
        json_string "${name:0:200}" name
        status=''
        if json_str PVESH "$i.status" && [[ "$REPLY" =~ ^[A-Za-z0-9_-]{1,32}$ ]]; then status="$REPLY"; fi
        # "template":1 (or "1", or true) on a template; absent, "" or 0 otherwise.
        template=false
        if json_get PVESH "$i.template" nsb && [[ "$REPLY" == 1 || "$REPLY" == true ]]; then template=true; fi
        # A lock this agent cannot name is still a lock: the controller refuses actions on it.
        lock=''
        if json_get PVESH "$i.lock" sn && [[ -n "$REPLY" ]]; then
          lock=unknown
          if [[ "$REPLY" =~ ^[a-z-]{1,32}$ ]]; then lock="$REPLY"; fi
          lock=",\"lock\":\"$lock\""
        fi
        metrics=''
        collecting metrics && for field in cpu mem maxmem disk maxdisk uptime netin netout; do
          { json_get PVESH "$i.$field" ns && is_number "$REPLY"; } || continue
          value="$REPLY"
          # cpu is a share of the guest's cores; Proxmox can report a little over 1 while it settles.
          if [[ "$field" == cpu ]] && at_least_one "$value"; then value=1; fi
          metrics+=",\"${field/#uptime/uptime_s}\":$value"
        done
        config=''
        if collecting configs && guest_config "$vmid" "$type"; then config=",\"config_sha256\":\"$REPLY\""; fi
        GUESTS_JSON+="${GUESTS_JSON:+,}{\"vmid\":$vmid,\"name\":$name,\"type\":\"$type\",\"status\":\"$status\",\"template\":$template$lock$config$metrics}"
        GUESTS_LIST+="$vmid $type"$'\n'
      done
    done
  fi
  # What the command loop may act on: "vmid must be an integer that the agent listed in its own last heartbeat".
  printf '%s' "$GUESTS_LIST" >"$WORK_DIR/guests.tmp" && mv -f "$WORK_DIR/guests.tmp" "$WORK_DIR/guests"
}

# "the value of cipassword and of any key containing password, secret or token becomes
# **REDACTED**" (the controller refuses a config that still holds one). Whitespace around a key
# does not hide it (` password : x`, a key followed by \r or a non-breaking space), and inside the
# values of args and of lxc.* keys, each key=value pair whose key says so has its value redacted
# (`args: -spice port=5900,password=x`, `lxc.environment: DB_PASSWORD=x`).
redact_config() {
  local line region sep rest key lower
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" =~ ^([^:=]*)([:=])(.*)$ ]]; then
      region="${BASH_REMATCH[1]}" sep="${BASH_REMATCH[2]}" rest="${BASH_REMATCH[3]}"
      key="${region//[[:space:]]/}"
      key="${key//$'\xc2\xa0'/}"
      key="${key//$'\xa0'/}"
      lower="${key,,}"
      if [[ "$key" =~ ^[A-Za-z0-9_.-]+$ ]]; then
        if secret_name "$key"; then
          if [[ "$rest" =~ ^([[:space:]]*)[^[:space:]] ]]; then line="$region$sep${BASH_REMATCH[1]}**REDACTED**"; fi
        elif [[ "$lower" == lxc.environment* ]]; then
          redact_assignment "$rest"
          line="$region$sep$REPLY"
        elif [[ "$lower" == args || "$lower" == lxc.* ]]; then
          redact_pairs "$rest"
          line="$region$sep$REPLY"
        fi
      fi
    fi
    printf '%s\n' "$line"
  done
}

# 0 when the name $1 says it holds a secret.
secret_name() {
  local lower="${1,,}"
  [[ "$lower" == *password* || "$lower" == *secret* || "$lower" == *token* ]]
}

# $1 (`NAME=value`, the whole rest of the line) with the value redacted when NAME says so, into REPLY.
redact_assignment() {
  REPLY="$1"
  if [[ "$1" == *=* ]] && secret_name "${1%%=*}" && [[ -n "${1#*=}" ]]; then REPLY="${1%%=*}=**REDACTED**"; fi
}

# $1 with the value of each key=value pair whose key says it is a secret redacted, into REPLY. A
# pair's value runs to the next comma or blank (`-spice port=5900,password=x,addr=y`). QEMU's secret
# object carries its secret as `data`: `-object secret,id=sec0,data=x` has that value redacted too.
redact_pairs() {
  local rest="$1" out='' before value name group
  while [[ "$rest" == *=* ]]; do
    before="${rest%%=*}"
    rest="${rest#*=}"
    value="${rest%%[,[:space:]]*}"
    rest="${rest:${#value}}"
    [[ "$before" =~ ([A-Za-z0-9_.-]*)$ ]]
    name="${BASH_REMATCH[1]}"
    group="$out$before"
    group="${group##*[[:space:]]}"
    group="${group#[\'\"]}"
    if [[ -n "$value" ]] && { secret_name "$name" || [[ "${name,,}" == data && "${group,,}" == secret,* ]]; }; then value='**REDACTED**'; fi
    out+="$before=$value"
  done
  REPLY="$out$rest"
}

# The redacted config of guest $1 (type $2) into $WORK_DIR/configs/$1, its SHA-256 into REPLY;
# 1 when it cannot be read or is over 64 KiB (then the heartbeat carries no hash for it).
declare -A CONFIG_STAMP=()
guest_config() {
  local vmid="$1" tool=qm dir=qemu-server text sum stamp
  if [[ "$2" == lxc ]]; then tool=pct dir=lxc; fi
  command -v "$tool" >/dev/null 2>&1 || return 1
  # qm and pct start a Perl interpreter (most of a second each): with many guests that is run again
  # only when the guest's config file changed (its time and size).
  stamp="$(stat -c '%Y.%s' "$PREFIX/etc/pve/$dir/$vmid.conf" 2>/dev/null)" || stamp=''
  if [[ -n "$stamp" && "${CONFIG_STAMP[$vmid]:-}" == "$stamp" && -f "$WORK_DIR/configs/$vmid.sha256" ]]; then
    IFS= read -r REPLY <"$WORK_DIR/configs/$vmid.sha256" && return 0
  fi
  rm -f "$WORK_DIR/configs/$vmid.sha256"
  text="$(timeout 10 "$tool" config "$vmid" 2>/dev/null | redact_config)" || return 1
  [[ -n "$text" ]] && ((${#text} <= 65536)) || return 1
  mkdir -p "$WORK_DIR/configs"
  printf '%s' "$text" >"$WORK_DIR/configs/$vmid"
  sum="$(sha256sum <"$WORK_DIR/configs/$vmid")"
  REPLY="${sum%% *}"
  printf '%s\n' "$REPLY" >"$WORK_DIR/configs/$vmid.sha256"
  CONFIG_STAMP[$vmid]="$stamp"
}

# ---------------------------------------------------------------------------------------------
# Metrics (PRODUCT.md "Metrics, alerts and notifications"). Every field is optional: what cannot be
# read, or does not look like a number, is left out (the server refuses a heartbeat with a bad one).

# A non-negative JSON number as the server takes it, or false.
is_number() { [[ "$1" =~ ^[0-9]{1,20}(\.[0-9]{1,20})?([eE][-+]?[0-9]{1,3})?$ ]]; }

# 0 when $1 (an is_number) is 1 or more, from its digits alone (bash has no decimals): `1.5e-05` is
# not, `15e-1` is. A mantissa with d whole digits (no leading zeros) times 10^e is at least 1 when
# d + e >= 1; one below 1 whose first non-zero decimal is the f-th, when e >= f.
at_least_one() {
  local whole fraction exponent=0 first
  [[ "$1" =~ ^([0-9]+)(\.([0-9]+))?([eE]([-+]?)([0-9]+))?$ ]] || return 1
  whole="${BASH_REMATCH[1]}"
  whole="${whole#"${whole%%[!0]*}"}"
  fraction="${BASH_REMATCH[3]}"
  [[ -n "${BASH_REMATCH[4]}" ]] && exponent=$((10#${BASH_REMATCH[6]}))
  [[ "${BASH_REMATCH[5]}" == - ]] && exponent=$((-exponent))
  if [[ -n "$whole" ]]; then
    ((${#whole} + exponent >= 1))
    return
  fi
  first="${fraction%%[1-9]*}"
  [[ "$first" != "$fraction" ]] || return 1 # all zeros
  ((exponent >= ${#first} + 1))
}

# /proc/stat's first line from the previous heartbeat: CPU use is measured between two of them.
CPU_PREVIOUS=''

# CPU use since the previous heartbeat, 0 to 1 with 4 decimals, into REPLY; 1 on the first call.
cpu_ratio() {
  local line total=0 idle i busy r
  local -a f p
  [[ -r "$PREFIX/proc/stat" ]] && IFS= read -r line <"$PREFIX/proc/stat" || return 1
  [[ "$line" =~ ^cpu\ +[0-9]+(\ +[0-9]+){3,} ]] || return 1
  read -r -a f <<<"$line"
  [[ -n "$CPU_PREVIOUS" ]] || { CPU_PREVIOUS="$line"; return 1; }
  read -r -a p <<<"$CPU_PREVIOUS"
  CPU_PREVIOUS="$line"
  # user nice system idle iowait irq softirq steal: idle and iowait are the idle ones.
  for ((i = 1; i <= 8 && i < ${#f[@]}; i++)); do total=$((total + f[i] - ${p[i]:-0})); done
  idle=$((f[4] + ${f[5]:-0} - ${p[4]:-0} - ${p[5]:-0}))
  ((total > 0 && idle >= 0 && idle <= total)) || return 1
  busy=$((total - idle))
  r=$(((busy * 10000 + total / 2) / total))
  if ((r >= 10000)); then REPLY=1; else printf -v REPLY '0.%04d' "$r"; fi
}

# `"metrics":{...},` from <root>/proc and df into METRICS_FIELD, or '' when none could be read. Not
# called in a subshell: the CPU reading it keeps must outlive the call.
METRICS_FIELD=''
host_metrics_field() {
  local json='' line key value total='' available='' rx=0 tx=0 nets=0 name rest
  local -a f
  if cpu_ratio; then json+=",\"cpu\":$REPLY"; fi
  if [[ -r "$PREFIX/proc/meminfo" ]]; then
    while read -r key value _; do
      case "$key" in
        MemTotal:) total="$value" ;;
        MemAvailable:) available="$value" ;;
      esac
    done <"$PREFIX/proc/meminfo"
    if [[ "$total" =~ ^[0-9]{1,15}$ && "$available" =~ ^[0-9]{1,15}$ ]] && ((available <= total)); then
      json+=",\"mem_used\":$(((total - available) * 1024)),\"mem_total\":$((total * 1024))"
    fi
  fi
  line="$(df -P -B1 "$PREFIX/" 2>/dev/null | tail -n 1 || true)"
  read -r -a f <<<"$line"
  if [[ "${f[1]:-}" =~ ^[0-9]{1,20}$ && "${f[2]:-}" =~ ^[0-9]{1,20}$ ]]; then json+=",\"disk_used\":${f[2]},\"disk_total\":${f[1]}"; fi
  if [[ -r "$PREFIX/proc/loadavg" ]] && read -r value _ <"$PREFIX/proc/loadavg" && [[ "$value" =~ ^[0-9]{1,6}(\.[0-9]{1,3})?$ ]]; then
    json+=",\"load1\":$value"
  fi
  # Bytes through the host's own interfaces: guests' taps, veths and firewall bridges are left
  # out, or a guest's traffic would count twice (once on its tap, again on the bridge).
  if [[ -r "$PREFIX/proc/net/dev" ]]; then
    while IFS= read -r line; do
      [[ "$line" == *:* ]] || continue
      name="${line%%:*}"
      name="${name//[[:space:]]/}"
      rest="${line#*:}"
      case "$name" in lo | tap* | veth* | fw* | '') continue ;; esac
      read -r -a f <<<"$rest"
      [[ "${f[0]:-}" =~ ^[0-9]{1,18}$ && "${f[8]:-}" =~ ^[0-9]{1,18}$ ]] || continue
      rx=$((rx + f[0]))
      tx=$((tx + f[8]))
      nets=$((nets + 1))
    done <"$PREFIX/proc/net/dev"
    if ((nets > 0)); then json+=",\"net_rx_bytes\":$rx,\"net_tx_bytes\":$tx"; fi
  fi
  METRICS_FIELD=''
  [[ -z "$json" ]] || METRICS_FIELD="\"metrics\":{${json#,}},"
}

# ---------------------------------------------------------------------------------------------
# Collectors (PRODUCT.md "Plugins"): metrics, configs, storage and backups, each on or off per host.
# Every heartbeat answer says which (`"collectors":{"metrics":true,…}`); the last word is kept in
# $STATE_DIR/collectors, so a restarted agent does not run one that was turned off. One that is off
# makes none of its calls: metrics no /proc reading and no guest numbers, configs no `qm config` /
# `pct config` and no uploads, storage no `pvesh get …/storage` or volume listing (the heartbeat
# then carries no storages, and the controller keeps the last ones it had). backups has no collector yet.

COLLECTORS_FILE="$STATE_DIR/collectors"
declare -A COLLECTOR_ON=([metrics]=1 [configs]=1 [storage]=1 [backups]=1)

collecting() { [[ "${COLLECTOR_ON[$1]-1}" == 1 ]]; }

# The kept collectors, a `name=0|1` line each; anything else in the file is ignored.
load_collectors() {
  local line name
  [[ -r "$COLLECTORS_FILE" ]] || return 0
  while IFS= read -r line || [[ -n "$line" ]]; do
    name="${line%%=*}"
    [[ -n "${COLLECTOR_ON[$name]+set}" && "${line#*=}" =~ ^[01]$ ]] && COLLECTOR_ON[$name]="${line#*=}"
  done <"$COLLECTORS_FILE"
  return 0
}

# The `collectors` object of the parsed answer $1 (an older controller sends none: nothing changes).
take_collectors() {
  local name value changed=''
  json_get "$1" collectors o || return 0
  for name in metrics configs storage backups; do
    json_bool "$1" "collectors.$name" || continue
    value=0
    [[ "$REPLY" == true ]] && value=1
    [[ "${COLLECTOR_ON[$name]}" != "$value" ]] || continue
    COLLECTOR_ON[$name]=$value
    changed+=" $name=$( ((value)) && echo on || echo off)"
  done
  [[ -n "$changed" ]] || return 0
  log "collectors:$changed"
  if ! { for name in metrics configs storage backups; do printf '%s=%s\n' "$name" "${COLLECTOR_ON[$name]}"; done >"$COLLECTORS_FILE.tmp" &&
    mv -f "$COLLECTORS_FILE.tmp" "$COLLECTORS_FILE"; }; then
    log "collectors: could not keep them in $COLLECTORS_FILE"
  fi
}

# What a collector that is off would have given is left out of the heartbeat, not sent empty; with
# storage off, downloads and uploads are refused (the agent no longer knows the storages).
skipped_collectors() {
  collecting metrics || METRICS_FIELD=''
  if ! collecting storage; then
    STORAGES_FIELD=''
    LISTED_STORAGES=()
    : >"$WORK_DIR/storages"
  fi
}

# ---------------------------------------------------------------------------------------------
# Heartbeat

STARTED_AT="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
INTERVAL=$INTERVAL_DEFAULT
WORK_DIR=''

heartbeat_body() {
  local name host version started json
  name="$(host_name)"
  json_string "$name" host
  json_string "$HOMEFLEET_AGENT_VERSION" version
  json_string "$STARTED_AT" started
  collect_guests "$name"
  skipped_collectors
  if collecting storage; then collect_storages "$name"; fi
  if collecting metrics; then host_metrics_field; fi
  json="{\"agent_version\":$version,\"started_at\":$started,\"hostname\":$host,"
  json+="\"addresses\":$(addresses_json),$(uptime_field)"
  json_string "$(hypervisor_version)" version
  json+="\"hypervisor_version\":$version,\"allows_scripts\":$(allows_scripts),$METRICS_FIELD$STORAGES_FIELD\"guests\":[$GUESTS_JSON]}"
  printf '%s' "$json"
}

# One heartbeat and the commands of its answer. 0 when the server took it, 1 otherwise.
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A ANSWER=()
heartbeat() {
  local body="$WORK_DIR/heartbeat.json" answer="$WORK_DIR/answer.json" count i
  heartbeat_body >"$body"
  rm -f "$answer"
  if ! http POST /api/agent/heartbeat "$answer" "$body" "$HOST_TOKEN"; then
    log "heartbeat: $(no_answer)"
    return 1
  fi
  if [[ "$HTTP_CODE" != 200 ]]; then
    case "$HTTP_CODE" in
      401) log "heartbeat: the server refused this host's token (401); the host may have been deleted" ;;
      403) log "heartbeat: refused (403): the server requires https" ;;
      429) log "heartbeat: the server asks this host to slow down (429): more heartbeats than it takes within one interval" ;;
      *) log "heartbeat: the server answered $HTTP_CODE" ;;
    esac
    return 1
  fi
  if ! [[ -f "$answer" ]] || (($(stat -c %s "$answer") > MAX_ANSWER_BYTES)) || ! json_parse ANSWER "$answer" || ! json_get ANSWER . o; then
    log "heartbeat: the answer is not a JSON object; ignored"
    return 1
  fi
  if json_int ANSWER heartbeat_interval_s; then
    INTERVAL="$(bounded_int "$REPLY" "$INTERVAL_MIN" "$INTERVAL_MAX" "$INTERVAL_DEFAULT")"
  fi
  # The new version of an upgrade reached the server: the watchdog can stand down.
  if [[ -f "$UPGRADE_FILE" ]] && [[ "$(sed -n 's/^version=//p' "$UPGRADE_FILE" 2>/dev/null || true)" == "$HOMEFLEET_AGENT_VERSION" ]]; then
    : >"$UPGRADE_OK_FILE" || true
  fi
  take_collectors ANSWER
  if collecting configs; then upload_configs; fi
  if collecting storage; then upload_volumes; fi
  if collecting backups; then report_backups; fi
  count=0
  if json_get ANSWER commands a; then count="$REPLY"; fi
  for ((i = 0; i < count; i++)); do
    if ! json_str ANSWER "commands.$i.type"; then
      log "heartbeat: a command without a type ignored"
      continue
    fi
    case "$REPLY" in
      uninstall) run_uninstall ANSWER "commands.$i" ;;
      upgrade) run_upgrade ANSWER "commands.$i" || true ;;
      # The command poll's fallback: run beside the heartbeats, which a clone must not hold up.
      guest.action | logs | deploy | download | upload | script) run_command ANSWER "commands.$i" & ;;
      *) log "heartbeat: unknown command type ignored" ;;
    esac
  done
  return 0
}

# Configs whose hash changed since this agent last uploaded them (the controller keeps each once).
declare -A UPLOADED=()
upload_configs() {
  local vmid type sha text body="$WORK_DIR/config.json" answer="$WORK_DIR/config-answer.json"
  # Only guests this heartbeat listed: a removed guest's config is not sent again.
  while read -r vmid type; do
    [[ -n "$vmid" && -f "$WORK_DIR/configs/$vmid.sha256" ]] || continue
    IFS= read -r sha <"$WORK_DIR/configs/$vmid.sha256" || continue
    [[ "${UPLOADED[$vmid]:-}" != "$sha" ]] || continue
    json_string "$(<"$WORK_DIR/configs/$vmid")" text
    printf '{"vmid":%s,"sha256":"%s","text":%s}' "$vmid" "$sha" "$text" >"$body"
    if http POST /api/agent/guest-configs "$answer" "$body" "$HOST_TOKEN" && [[ "$HTTP_CODE" == 2?? ]]; then
      UPLOADED[$vmid]="$sha"
    else
      log "config of guest $vmid: not taken (${HTTP_CODE:-no answer}); sent again with the next heartbeat"
    fi
  done <<<"$GUESTS_LIST"
}

# ---------------------------------------------------------------------------------------------
# Guest actions and log requests (PRODUCT.md "Guest control through agents")

# Seconds each verb may take on the host.
declare -A VERB_LIMIT=([stop]=60 [start]=120 [shutdown]=300 [reboot]=300 [snapshot]=600 [rollback]=600 [destroy]=600 [clone]=1800)
readonly SNAPSHOT_RE='^[A-Za-z][A-Za-z0-9_-]{0,39}$'
readonly GUEST_NAME_RE='^[A-Za-z0-9]([A-Za-z0-9.-]{0,61}[A-Za-z0-9])?$'
# A refused command reports this exit code (nothing was run).
readonly REFUSED=126

# The type (qemu or lxc) of guest $1 as this agent's last heartbeat listed it, into REPLY.
listed_guest() {
  local vmid type
  [[ -r "$WORK_DIR/guests" ]] || return 1
  while read -r vmid type; do
    if [[ "$vmid" == "$1" ]]; then
      REPLY="$type"
      return 0
    fi
  done <"$WORK_DIR/guests"
  return 1
}

# Field $2 (a path in the parsed document $1) of a command, of JSON type $3 (s string, n whole
# number, b boolean), into REPLY; with $4 = optional an absent field gives 0 and REPLY ''. 1 with the
# reason in REPLY when it is absent or of another type: such a command is refused whole.
command_field() {
  local code=0 name="${2##*.}"
  case "$3" in
    s) json_str "$1" "$2" || code=$? ;;
    n) json_int "$1" "$2" || code=$? ;;
    b) json_bool "$1" "$2" || code=$? ;;
  esac
  ((code != 0)) || return 0
  if ((code == 1)) && [[ "${4:-}" == optional ]]; then
    REPLY=''
    return 0
  fi
  case "$code$3" in
    1?) REPLY="$name is missing" ;;
    2s) REPLY="$name must be a string" ;;
    2n) REPLY="$name must be a whole number" ;;
    *) REPLY="$name must be true or false" ;;
  esac
  return 1
}

# Builds the argument list of the guest action at path $2 of the parsed document $1 into ARGV (tool
# first) and its time limit into LIMIT; 1 with the reason in REPLY when it is refused.
ARGV=()
LIMIT=0
guest_argv() {
  local doc="$1" at="$2" vmid action type tool name new_vmid
  ARGV=()
  command_field "$doc" "$at.action" s || return 1
  [[ "$REPLY" =~ ^[a-z]{1,16}$ && -n "${VERB_LIMIT[$REPLY]:-}" ]] || { REPLY='unknown action'; return 1; }
  action="$REPLY"
  command_field "$doc" "$at.vmid" n || return 1
  [[ "$REPLY" =~ ^[1-9][0-9]{0,14}$ ]] || { REPLY='invalid vmid'; return 1; }
  vmid="$REPLY"
  command_field "$doc" "$at.guest_type" s optional || return 1
  name="$REPLY"
  listed_guest "$vmid" || { REPLY="guest $vmid is not one this host listed"; return 1; }
  type="$REPLY"
  tool=qm
  [[ "$type" == lxc ]] && tool=pct
  # The guest's type is the one this host listed, whatever the command says.
  if [[ -n "$name" && "$name" != "$type" ]]; then REPLY="guest $vmid is $type, not $name"; return 1; fi
  ARGV=("$tool" "$action" "$vmid")
  case "$action" in
    snapshot)
      command_field "$doc" "$at.name" s || return 1
      [[ "$REPLY" =~ $SNAPSHOT_RE ]] || { REPLY='invalid snapshot name'; return 1; }
      ARGV+=("$REPLY")
      ;;
    rollback)
      command_field "$doc" "$at.snapshot" s || return 1
      [[ "$REPLY" =~ $SNAPSHOT_RE ]] || { REPLY='invalid snapshot name'; return 1; }
      ARGV+=("$REPLY")
      ;;
    clone)
      command_field "$doc" "$at.new_vmid" n || return 1
      [[ "$REPLY" =~ ^[1-9][0-9]{2,8}$ ]] || { REPLY='invalid new_vmid'; return 1; }
      new_vmid="$REPLY"
      ! listed_guest "$new_vmid" || { REPLY="guest $new_vmid already exists"; return 1; }
      command_field "$doc" "$at.name" s || return 1
      [[ "$REPLY" =~ $GUEST_NAME_RE ]] || { REPLY='invalid guest name'; return 1; }
      name="$REPLY"
      command_field "$doc" "$at.full" b optional || return 1
      ARGV+=("$new_vmid")
      if [[ "$tool" == qm ]]; then ARGV+=(--name "$name"); else ARGV+=(--hostname "$name"); fi
      if [[ "$REPLY" == true ]]; then ARGV+=(--full 1); fi
      ;;
  esac
  LIMIT="${VERB_LIMIT[$action]}"
}

# ---------------------------------------------------------------------------------------------
# Deploy and rebuild (PRODUCT.md "Deploy, rebuild and server keys"): a new guest from a qemu or lxc
# guest of this host (qm clone / pct clone) or from a container template volume (pct create), then
# its settings, disk and start; a rebuild first stops and destroys the guest it replaces. Every
# field is checked before anything runs; once the guest exists, a failed step removes it again.

readonly DEPLOY_LIMIT_S=1800
readonly STORAGE_RE='^[A-Za-z][A-Za-z0-9_.-]{0,63}$'
readonly OCTET_RE='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
readonly IPV4_RE="^$OCTET_RE(\.$OCTET_RE){3}$"
readonly DISK_KEY_RE='^(ide|sata|scsi|virtio)[0-9]{1,2}$'
# The key types a server key may have (PRODUCT.md "Server keys").
# (glibc's regex is slow to build for large repeat counts: the lengths are checked apart.)
readonly SSH_KEY_LINE_RE='^([a-z0-9@.-]+) ([A-Za-z0-9+/]+={0,2})( [^[:cntrl:]]*)?$'
readonly SSH_KEY_TYPES=' ssh-ed25519 ecdsa-sha2-nistp256 ecdsa-sha2-nistp384 ecdsa-sha2-nistp521 ssh-rsa sk-ssh-ed25519@openssh.com sk-ecdsa-sha2-nistp256@openssh.com '

# The command being read ($D_DOC at path $D_AT) and what was read of it.
D_DOC='' D_AT='' D_NEW='' D_REBUILD='' D_OLD_TYPE='' D_KIND='' D_SOURCE='' D_NAME='' D_FULL='' D_STORAGE=''
D_CORES='' D_MEMORY='' D_DISK='' D_BRIDGE='' D_VLAN='' D_IP='' D_GATEWAY='' D_CI_USER='' D_CLOUD='' D_SNIPPETS='' D_START=''
D_KEYS=()

# Field $1 (a path below the command) as a string matching $2, else "invalid $3"; '' when absent and $4 = optional.
deploy_str() {
  if [[ "${4:-}" == optional ]] && ! json_get "$D_DOC" "$D_AT.$1" sznbao; then REPLY=''; return 0; fi
  command_field "$D_DOC" "$D_AT.$1" s || return 1
  [[ "$REPLY" =~ $2 ]] || { REPLY="invalid $3"; return 1; }
}

# Field $1 as a whole number from $2 to $3; '' when absent and $4 = optional.
deploy_int() {
  if [[ "${4:-}" == optional ]] && ! json_get "$D_DOC" "$D_AT.$1" sznbao; then REPLY=''; return 0; fi
  command_field "$D_DOC" "$D_AT.$1" n || return 1
  ((REPLY >= $2 && REPLY <= $3)) || { REPLY="${1##*.} must be from $2 to $3"; return 1; }
}

# 0 when $1 is one OpenSSH public key line: a type from the accepted list, a base64 blob whose
# embedded type string is that same type, and an optional comment without control characters (no
# authorized_keys options such as command="..."). 1 with the reason in REPLY.
ssh_key_ok() {
  local type blob hex want len
  [[ "$1" =~ $SSH_KEY_LINE_RE ]] || { REPLY='not a line "type base64-key [comment]"'; return 1; }
  type="${BASH_REMATCH[1]}" blob="${BASH_REMATCH[2]}"
  ((${#1} <= 16384)) || { REPLY='the line is over 16 KiB'; return 1; }
  [[ "$SSH_KEY_TYPES" == *" $type "* ]] || { REPLY="type $type is not accepted"; return 1; }
  { ((${#blob} % 4 == 0)) && base64 -d <<<"$blob" >/dev/null 2>&1; } || { REPLY='its key data is not base64'; return 1; }
  # The blob starts with its own type as an SSH string (4-byte length, then the name): a key of
  # another type under this line's name is refused.
  hex="$(base64 -d <<<"${blob:0:96}" 2>/dev/null | od -An -v -tx1 | tr -d ' \n')"
  want="$(printf '%s' "$type" | od -An -v -tx1 | tr -d ' \n')"
  len=-1
  if ((${#hex} >= 8)); then len=$((16#${hex:0:8})); fi
  [[ "$len" == "${#type}" && "${hex:8:len*2}" == "$want" && $((${#blob} * 3 / 4)) -gt $((4 + len + 4)) ]] ||
    { REPLY="its key data is not a $type key"; return 1; }
}

# Reads and checks the deploy command at path $2 of the parsed document $1 into the D_ variables;
# 1 with the reason in REPLY when it is refused (then nothing runs).
deploy_check() {
  local count i line
  D_DOC="$1" D_AT="$2"
  D_KEYS=()
  deploy_int new_vmid 100 999999999 || return 1
  D_NEW="$REPLY"
  command_field "$D_DOC" "$D_AT.rebuild" b || return 1
  D_REBUILD="$REPLY"
  D_OLD_TYPE=''
  if listed_guest "$D_NEW"; then
    [[ "$D_REBUILD" == true ]] || { REPLY="guest $D_NEW already exists"; return 1; }
    D_OLD_TYPE="$REPLY"
  elif [[ "$D_REBUILD" == true ]]; then
    REPLY="guest $D_NEW to rebuild is not one this host listed"
    return 1
  fi
  json_get "$D_DOC" "$D_AT.source" o || { REPLY='source must be an object'; return 1; }
  deploy_str source.kind '^(qemu|lxc|volume)$' 'source kind' || return 1
  D_KIND="$REPLY"
  if [[ "$D_KIND" == volume ]]; then
    deploy_str source.volume '^[A-Za-z][A-Za-z0-9_.-]{0,63}:vztmpl/[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$' 'source volume' || return 1
    D_SOURCE="$REPLY"
  else
    deploy_int source.vmid 100 999999999 || return 1
    D_SOURCE="$REPLY"
    listed_guest "$D_SOURCE" || { REPLY="source guest $D_SOURCE is not one this host listed"; return 1; }
    [[ "$REPLY" == "$D_KIND" ]] || { REPLY="source guest $D_SOURCE is $REPLY, not $D_KIND"; return 1; }
    [[ "$D_SOURCE" != "$D_NEW" ]] || { REPLY='a guest cannot be rebuilt from itself'; return 1; }
  fi
  deploy_str name '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$' 'name (a DNS label)' || return 1
  D_NAME="$REPLY"
  command_field "$D_DOC" "$D_AT.full" b optional || return 1
  D_FULL="${REPLY:-false}"
  deploy_str storage "$STORAGE_RE" storage optional || return 1
  D_STORAGE="$REPLY"
  deploy_int cores 1 128 optional || return 1
  D_CORES="$REPLY"
  deploy_int memory_mb 64 4194304 optional || return 1
  D_MEMORY="$REPLY"
  deploy_int disk_gb 1 65536 optional || return 1
  D_DISK="$REPLY"
  D_BRIDGE='' D_VLAN='' D_IP='' D_GATEWAY=''
  if json_get "$D_DOC" "$D_AT.network" sznbao; then
    json_get "$D_DOC" "$D_AT.network" o || { REPLY='network must be an object'; return 1; }
    deploy_str network.bridge '^vmbr[0-9]{1,4}$' bridge || return 1
    D_BRIDGE="$REPLY"
    deploy_int network.vlan 1 4094 optional || return 1
    D_VLAN="$REPLY"
    deploy_str network.ip "^(dhcp|$OCTET_RE(\.$OCTET_RE){3}/([1-9]|[12][0-9]|3[0-2]))$" 'ip (dhcp or a.b.c.d/nn)' || return 1
    D_IP="$REPLY"
    deploy_str network.gateway "$IPV4_RE" 'gateway (a.b.c.d)' optional || return 1
    D_GATEWAY="$REPLY"
    [[ -z "$D_GATEWAY" || "$D_IP" != dhcp ]] || { REPLY='a gateway goes with a static ip, not dhcp'; return 1; }
  fi
  deploy_str ci_user '^[a-z_][a-z0-9_-]{0,31}$' ci_user optional || return 1
  D_CI_USER="$REPLY"
  json_get "$D_DOC" "$D_AT.ssh_keys" a || { REPLY='ssh_keys must be a list'; return 1; }
  count="$REPLY"
  ((count <= 100)) || { REPLY='ssh_keys: more than 100 keys'; return 1; }
  for ((i = 0; i < count; i++)); do
    json_str "$D_DOC" "$D_AT.ssh_keys.$i" || { REPLY="ssh_keys.$i must be a string"; return 1; }
    line="$REPLY"
    ssh_key_ok "$line" || { REPLY="ssh_keys.$i is not an OpenSSH public key: $REPLY"; return 1; }
    D_KEYS+=("$line")
  done
  command_field "$D_DOC" "$D_AT.cloud_config" s optional || return 1
  D_CLOUD="$REPLY"
  if [[ -n "$D_CLOUD" ]]; then
    (($(printf '%s' "$D_CLOUD" | wc -c) <= 65536)) || { REPLY='cloud_config is over 64 KiB'; return 1; }
    [[ "$D_CLOUD" == '#cloud-config'$'\n'* ]] || { REPLY='cloud_config must start with a #cloud-config line'; return 1; }
  fi
  deploy_str snippets_storage "$STORAGE_RE" snippets_storage optional || return 1
  D_SNIPPETS="$REPLY"
  [[ -z "$D_CLOUD" || -n "$D_SNIPPETS" ]] || { REPLY='cloud_config needs snippets_storage'; return 1; }
  command_field "$D_DOC" "$D_AT.start" b || return 1
  D_START="$REPLY"
  # What Proxmox cannot do for the source given: refused rather than silently left out.
  if [[ "$D_KIND" != volume && -n "$D_STORAGE" && "$D_FULL" != true ]]; then
    REPLY='storage needs full: a linked clone stays on its template'"'"'s storage'
    return 1
  fi
  case "$D_KIND" in
    lxc)
      ((${#D_KEYS[@]} == 0)) || { REPLY='ssh keys cannot be applied to a cloned container'; return 1; }
      [[ -z "$D_CLOUD" ]] || { REPLY='a cloud config cannot be applied to a cloned container'; return 1; }
      [[ -z "$D_CI_USER" ]] || { REPLY='ci_user cannot be applied to a container'; return 1; }
      ;;
    volume)
      [[ -z "$D_CLOUD" ]] || { REPLY='a cloud config cannot be applied to a container'; return 1; }
      [[ -z "$D_CI_USER" ]] || { REPLY='ci_user cannot be applied to a container'; return 1; }
      [[ "$D_FULL" != true ]] || { REPLY='full applies to clones, not to a container template volume'; return 1; }
      [[ -z "$D_DISK" || -n "$D_STORAGE" ]] || { REPLY='disk_gb for a container template volume needs storage'; return 1; }
      ;;
  esac
}

# A deploy's running state: its output file, its deadline, the step that failed and its exit code.
D_OUT='' D_DEADLINE=0 D_FAILED='' D_CODE=0 D_NODE=''

# Runs one step (an argument list, tool first) within what is left of the deploy's time limit (and
# its verb's own limit, when it has one); its output goes to $D_OUT (stdout to $D_STDOUT when set).
# 1 with D_FAILED and D_CODE set when it fails.
deploy_step() {
  local limit=$((D_DEADLINE - SECONDS)) code=0
  if [[ -n "${VERB_LIMIT[$2]:-}" ]] && ((VERB_LIMIT[$2] < limit)); then limit="${VERB_LIMIT[$2]}"; fi
  if ((limit <= 0)); then
    D_FAILED="$*" D_CODE=124
    printf 'homefleet-agent: the deploy did not finish within %ss\n' "$DEPLOY_LIMIT_S" >>"$D_OUT"
    return 1
  fi
  printf '$ %s\n' "$*" >>"$D_OUT"
  timeout --kill-after=15 "$limit" "$@" </dev/null >>"${D_STDOUT:-$D_OUT}" 2>>"$D_OUT" || code=$?
  ((code != 0)) || return 0
  if ((code == 124)); then printf 'homefleet-agent: %s %s did not finish within %ss\n' "$1" "$2" "$limit" >>"$D_OUT"; fi
  D_FAILED="$*" D_CODE="$code"
  return 1
}

# A check of the agent's own failed ($1: the step, $2: why): reported like a failed step, exit 1.
deploy_fail() {
  printf 'homefleet-agent: %s\n' "$2" >>"$D_OUT"
  D_FAILED="$1" D_CODE=1
  return 1
}

# The config of the new guest ($1: qemu or lxc) as pvesh prints it, parsed into DEPLOY_CONFIG.
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A DEPLOY_CONFIG=()
read_new_config() {
  local file="$D_WORK/config.json"
  D_STDOUT="$file" deploy_step pvesh get "/nodes/$D_NODE/$1/$D_NEW/config" --output-format json || return 1
  { json_parse DEPLOY_CONFIG "$file" && json_get DEPLOY_CONFIG . o; } ||
    deploy_fail "pvesh get /nodes/$D_NODE/$1/$D_NEW/config" "the config of guest $D_NEW is not a JSON object"
}

# The size in KiB of the disk whose config value is $1 (`local-lvm:vm-300-disk-0,size=36352M`) into REPLY.
disk_kib() {
  [[ ",$1," =~ ,size=([0-9]{1,15})([KMGT]?), ]] || return 1
  case "${BASH_REMATCH[2]}" in
    K) REPLY="${BASH_REMATCH[1]}" ;;
    M) REPLY=$((BASH_REMATCH[1] * 1024)) ;;
    G) REPLY=$((BASH_REMATCH[1] * 1048576)) ;;
    T) REPLY=$((BASH_REMATCH[1] * 1073741824)) ;;
    *) REPLY=$((BASH_REMATCH[1] / 1024)) ;;
  esac
}

# The new VM's boot disk into REPLY: the first disk (not a CD drive) of `boot: order=...`, else `bootdisk`.
boot_disk() {
  local devices dev
  if json_str DEPLOY_CONFIG boot && [[ "$REPLY" == order=* ]]; then
    IFS=';' read -r -a devices <<<"${REPLY#order=}"
    for dev in ${devices[@]+"${devices[@]}"}; do
      { [[ "$dev" =~ $DISK_KEY_RE ]] && json_str DEPLOY_CONFIG "$dev" && [[ "$REPLY" != *media=cdrom* ]]; } || continue
      REPLY="$dev"
      return 0
    done
  fi
  json_str DEPLOY_CONFIG bootdisk && [[ "$REPLY" =~ $DISK_KEY_RE ]]
}

# The new VM's net0 on the bridge (and VLAN) asked for, keeping the model, the MAC and the other
# options of the net0 it was cloned with, into REPLY.
qemu_net0() {
  local option kept=''
  local -a options
  if ! json_str DEPLOY_CONFIG net0 || [[ -z "$REPLY" ]]; then
    REPLY="virtio,bridge=$D_BRIDGE${D_VLAN:+,tag=$D_VLAN}"
    return 0
  fi
  IFS=, read -r -a options <<<"$REPLY"
  [[ "${options[0]}" =~ ^[a-z0-9_-]{1,32}(=[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5})?$ ]] || return 1
  for option in "${options[@]:1}"; do
    [[ "$option" =~ ^[a-z_]{1,32}=[A-Za-z0-9:._\;-]{0,64}$ ]] || return 1
    [[ "$option" == bridge=* || "$option" == tag=* ]] || kept+=",$option"
  done
  REPLY="${options[0]},bridge=$D_BRIDGE$kept${D_VLAN:+,tag=$D_VLAN}"
}

# Writes the cloud config to <snippets_storage>:snippets/homefleet-<new>.yaml (where `pvesm path`
# says that is) and keeps its path in D_SNIPPET, for removal when the deploy fails.
D_SNIPPET=''
write_snippet() {
  local volume="$D_SNIPPETS:snippets/homefleet-$D_NEW.yaml" path='' made
  D_STDOUT="$D_WORK/snippet-path" deploy_step pvesm path "$volume" || return 1
  IFS= read -r path <"$D_WORK/snippet-path" || true
  [[ "$path" =~ ^/[^[:cntrl:]]*/homefleet-$D_NEW\.yaml$ && "$path" != */../* ]] ||
    deploy_fail "pvesm path $volume" "pvesm path $volume did not print a path to homefleet-$D_NEW.yaml" || return 1
  [[ -d "${path%/*}" ]] ||
    deploy_fail "pvesm path $volume" "${path%/*} does not exist: enable the content type snippets on storage $D_SNIPPETS" || return 1
  made=''
  { made="$(mktemp "${path%/*}/.homefleet-$D_NEW.XXXXXX")" && printf '%s' "$D_CLOUD" >"$made" && mv -f "$made" "$path"; } ||
    { [[ -z "$made" ]] || rm -f "$made"; deploy_fail "write $path" "could not write the cloud config to $path"; return 1; }
  D_SNIPPET="$path"
}

# qm clone, qm set, qm resize, qm start.
deploy_qemu() {
  local disk
  local -a clone=(qm clone "$D_SOURCE" "$D_NEW" --name "$D_NAME") options=()
  if [[ "$D_FULL" == true ]]; then clone+=(--full 1); fi
  if [[ -n "$D_STORAGE" ]]; then clone+=(--storage "$D_STORAGE"); fi
  deploy_step "${clone[@]}" || return 1
  D_MADE=qm
  if [[ -n "$D_BRIDGE$D_DISK" ]]; then read_new_config qemu || return 1; fi
  [[ -z "$D_CORES" ]] || options+=(--cores "$D_CORES")
  [[ -z "$D_MEMORY" ]] || options+=(--memory "$D_MEMORY")
  [[ -z "$D_CI_USER" ]] || options+=(--ciuser "$D_CI_USER")
  ((${#D_KEYS[@]} == 0)) || options+=(--sshkeys "$D_KEYS_FILE")
  if [[ -n "$D_BRIDGE" ]]; then
    options+=(--ipconfig0 "ip=$D_IP${D_GATEWAY:+,gw=$D_GATEWAY}")
    qemu_net0 || deploy_fail "qm set $D_NEW --net0" "the net0 of guest $D_NEW is not one this agent can read" || return 1
    options+=(--net0 "$REPLY")
  fi
  if [[ -n "$D_CLOUD" ]]; then
    write_snippet || return 1
    options+=(--cicustom "user=$D_SNIPPETS:snippets/homefleet-$D_NEW.yaml")
  fi
  if ((${#options[@]})); then deploy_step qm set "$D_NEW" "${options[@]}" || return 1; fi
  if [[ -n "$D_DISK" ]]; then
    boot_disk || deploy_fail "qm resize $D_NEW" "guest $D_NEW has no boot disk to resize" || return 1
    disk="$REPLY"
    json_str DEPLOY_CONFIG "$disk" || REPLY=''
    if ! disk_kib "$REPLY" || ((D_DISK * 1048576 > REPLY)); then
      deploy_step qm resize "$D_NEW" "$disk" "${D_DISK}G" || return 1
    fi
  fi
  if [[ "$D_START" == true ]]; then deploy_step qm start "$D_NEW" || return 1; fi
}

# The container's net0 as asked for.
lxc_net0() {
  REPLY="name=eth0,bridge=$D_BRIDGE,ip=$D_IP${D_GATEWAY:+,gw=$D_GATEWAY}${D_VLAN:+,tag=$D_VLAN}"
}

# pct clone, pct set, pct resize, pct start.
deploy_lxc_clone() {
  local -a clone=(pct clone "$D_SOURCE" "$D_NEW" --hostname "$D_NAME") options=()
  if [[ "$D_FULL" == true ]]; then clone+=(--full 1); fi
  if [[ -n "$D_STORAGE" ]]; then clone+=(--storage "$D_STORAGE"); fi
  deploy_step "${clone[@]}" || return 1
  D_MADE=pct
  [[ -z "$D_CORES" ]] || options+=(--cores "$D_CORES")
  [[ -z "$D_MEMORY" ]] || options+=(--memory "$D_MEMORY")
  if [[ -n "$D_BRIDGE" ]]; then lxc_net0; options+=(--net0 "$REPLY"); fi
  if ((${#options[@]})); then deploy_step pct set "$D_NEW" "${options[@]}" || return 1; fi
  if [[ -n "$D_DISK" ]]; then
    read_new_config lxc || return 1
    if ! json_str DEPLOY_CONFIG rootfs || ! disk_kib "$REPLY" || ((D_DISK * 1048576 > REPLY)); then
      deploy_step pct resize "$D_NEW" rootfs "${D_DISK}G" || return 1
    fi
  fi
  if [[ "$D_START" == true ]]; then deploy_step pct start "$D_NEW" || return 1; fi
}

# pct create from a container template volume, pct start.
deploy_volume() {
  local -a create=(pct create "$D_NEW" "$D_SOURCE" --hostname "$D_NAME")
  [[ -z "$D_CORES" ]] || create+=(--cores "$D_CORES")
  [[ -z "$D_MEMORY" ]] || create+=(--memory "$D_MEMORY")
  if [[ -n "$D_DISK" ]]; then
    create+=(--rootfs "$D_STORAGE:$D_DISK")
  elif [[ -n "$D_STORAGE" ]]; then
    create+=(--storage "$D_STORAGE")
  fi
  if [[ -n "$D_BRIDGE" ]]; then lxc_net0; create+=(--net0 "$REPLY"); fi
  ((${#D_KEYS[@]} == 0)) || create+=(--ssh-public-keys "$D_KEYS_FILE")
  create+=(--unprivileged 1)
  # A create that fails is rolled back by pct itself; the guest exists once it succeeded.
  deploy_step "${create[@]}" || return 1
  D_MADE=pct
  if [[ "$D_START" == true ]]; then deploy_step pct start "$D_NEW" || return 1; fi
}

# The guest being rebuilt: stopped when it runs, then destroyed with its disks.
rebuild_remove() {
  local tool=qm type="$D_OLD_TYPE" file="$D_WORK/status.json"
  [[ "$type" == lxc ]] && tool=pct
  D_STDOUT="$file" deploy_step pvesh get "/nodes/$D_NODE/$type/$D_NEW/status/current" --output-format json || return 1
  { json_parse DEPLOY_CONFIG "$file" && json_str DEPLOY_CONFIG status; } ||
    deploy_fail "pvesh get /nodes/$D_NODE/$type/$D_NEW/status/current" "the status of guest $D_NEW could not be read" || return 1
  if [[ "$REPLY" != stopped ]]; then deploy_step "$tool" stop "$D_NEW" || return 1; fi
  deploy_step "$tool" destroy "$D_NEW" --purge
}

# Runs the deploy command at path $2 of the parsed document $1, its output into file $3, in the
# scratch folder $4; returns the exit code to report (0 deployed, REFUSED when nothing ran, else
# the failed step's).
D_WORK='' D_MADE='' D_KEYS_FILE=''
run_deploy() {
  local keys_dir='' code=0 removed
  D_OUT="$3" D_WORK="$4" D_MADE='' D_KEYS_FILE='' D_SNIPPET='' D_FAILED='' D_CODE=0
  if ! deploy_check "$1" "$2"; then
    printf 'refused by the agent: %s\n' "$REPLY" >"$D_OUT"
    return "$REFUSED"
  fi
  D_NODE="$(host_name)"
  D_NODE="${D_NODE%%.*}"
  [[ "$D_NODE" =~ ^[A-Za-z0-9_-]{1,63}$ ]] || { printf 'refused by the agent: this host has no node name\n' >"$D_OUT"; return "$REFUSED"; }
  D_DEADLINE=$((SECONDS + DEPLOY_LIMIT_S))
  : >"$D_OUT"
  if ((${#D_KEYS[@]})); then
    # Its own private folder (0700), the file 0600, removed below whatever the deploy did.
    if private_dir "$WORK_DIR/keys.XXXXXX"; then keys_dir="$REPLY"; fi
    D_KEYS_FILE="$keys_dir/authorized_keys"
    { [[ -n "$keys_dir" ]] && printf '%s\n' "${D_KEYS[@]}" >"$D_KEYS_FILE" && chmod 0600 "$D_KEYS_FILE"; } ||
      deploy_fail 'write the ssh key file' 'could not write the ssh key file' || code=1
  fi
  if ((code == 0)) && [[ "$D_REBUILD" == true ]]; then rebuild_remove || code=1; fi
  if ((code == 0)); then
    case "$D_KIND" in
      qemu) deploy_qemu || code=1 ;;
      lxc) deploy_lxc_clone || code=1 ;;
      volume) deploy_volume || code=1 ;;
    esac
  fi
  if [[ -n "$keys_dir" ]]; then rm -rf "$keys_dir"; fi
  if ((code == 0)); then
    printf 'homefleet-agent: guest %s deployed\n' "$D_NEW" >>"$D_OUT"
    return 0
  fi
  if [[ -n "$D_SNIPPET" ]]; then rm -f "$D_SNIPPET"; fi
  removed=''
  if [[ -n "$D_MADE" ]]; then
    printf '$ %s destroy %s --purge\n' "$D_MADE" "$D_NEW" >>"$D_OUT"
    if timeout --kill-after=15 "${VERB_LIMIT[destroy]}" "$D_MADE" destroy "$D_NEW" --purge </dev/null >>"$D_OUT" 2>&1; then
      removed="; the half-made guest $D_NEW was removed"
    else
      removed="; the half-made guest $D_NEW could not be removed: remove it by hand"
    fi
  fi
  printf 'homefleet-agent: the deploy failed at: %s (exit %s)%s\n' "$D_FAILED" "$D_CODE" "$removed" >>"$D_OUT"
  ((D_CODE != 0)) || D_CODE=1
  return "$D_CODE"
}

# ---------------------------------------------------------------------------------------------
# Backups (PRODUCT.md "Fleet health: policies across every source"): the cluster's backup jobs
# (`pvesh get /cluster/backup`) and the newest backups of each guest on the node's active storages
# that hold content `backup` (`pvesh get .../storage/<s>/content --content backup`), sent to POST
# /api/agent/backups when they changed. Listed at most every BACKUPS_MIN (a Proxmox Backup Server
# storage answers slowly), and not at all while the `backups` collector is off (take_collectors).
# Anything pvesh does not answer, or answers in a shape that cannot be read, skips the report whole:
# half a list of jobs would say guests are in no backup job.

# The newest backups kept per guest: what "backed up within N hours" and the instance page need.
readonly BACKUPS_PER_GUEST=10 MAX_BACKUP_JOBS=1000 MAX_BACKUPS=25000
readonly BACKUP_VOLID_RE='^[A-Za-z][A-Za-z0-9_.-]{0,63}:[A-Za-z0-9][A-Za-z0-9._+/:-]{0,300}$'
readonly JOB_ID_RE='^[A-Za-z0-9][A-Za-z0-9:._-]{0,127}$'
BACKUPS_MIN="$(bounded_int "${HOMEFLEET_BACKUPS_MIN_S:-}" 0 86400 300)"
BACKUPS_AT='' BACKUPS_SENT=''
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A JOBS_DOC=() POOL_DOC=() BACKUP_DOC=()

# The vmids of a comma-joined list ("100,101", as /cluster/backup writes vmid and exclude) as a JSON
# list into REPLY; 1 when an entry is not a vmid.
vmid_list() {
  local -a ids
  local id out=''
  IFS=', ' read -r -a ids <<<"$1"
  for id in ${ids[@]+"${ids[@]}"}; do
    [[ "$id" =~ ^[1-9][0-9]{0,8}$ ]] || return 1
    out+="${out:+,}$id"
  done
  REPLY="[$out]"
}

# The members of pool $1 (`pvesh get /pools/<pool>`) as a JSON list of vmids into REPLY.
pool_vmids() {
  local file="$WORK_DIR/pvesh-pool.json" count i out=''
  [[ "$1" =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ ]] || return 1
  timeout 30 pvesh get "/pools/$1" --output-format json >"$file" 2>/dev/null || return 1
  json_parse POOL_DOC "$file" && json_get POOL_DOC members a || return 1
  count="$REPLY"
  for ((i = 0; i < count; i++)); do
    if json_get POOL_DOC "members.$i.vmid" ns && [[ "$REPLY" =~ ^[1-9][0-9]{0,8}$ ]]; then out+="${out:+,}$REPLY"; fi
  done
  REPLY="[$out]"
}

# The backup jobs that run on node $1 as a JSON list into REPLY ({id, enabled, schedule, vmids:
# [..] | "all", exclude, storage}); 1 when pvesh did not list them as it should. A job bound to
# another node (`node`) backs up none of this node's guests and is left out.
backup_jobs() {
  local node="$1" file="$WORK_DIR/pvesh-cluster-backup.json" count i json='' id enabled schedule vmids exclude storage n=0
  if ! timeout 30 pvesh get /cluster/backup --output-format json >"$file" 2>/dev/null || ! json_parse JOBS_DOC "$file" || ! json_get JOBS_DOC . a; then
    log "backups: pvesh get /cluster/backup did not print a JSON list; backups are not reported"
    return 1
  fi
  count="$REPLY"
  for ((i = 0; i < count && n < MAX_BACKUP_JOBS; i++)); do
    { json_str JOBS_DOC "$i.id" && [[ "$REPLY" =~ $JOB_ID_RE ]]; } || { log "backups: a job without a readable id is left out"; continue; }
    id="$REPLY"
    if json_str JOBS_DOC "$i.type" && [[ "$REPLY" != vzdump ]]; then continue; fi
    if json_str JOBS_DOC "$i.node" && [[ "$REPLY" != "$node" ]]; then continue; fi
    enabled=true
    if json_get JOBS_DOC "$i.enabled" nsb && ! flag_set JOBS_DOC "$i.enabled"; then enabled=false; fi
    # PVE 7.0 and later write `schedule`; older jobs have `dow` and `starttime`.
    schedule=''
    if json_str JOBS_DOC "$i.schedule"; then
      schedule="$REPLY"
    elif json_str JOBS_DOC "$i.starttime"; then
      schedule="$REPLY"
      if json_str JOBS_DOC "$i.dow"; then schedule="$REPLY $schedule"; fi
    fi
    json_string "${schedule:0:256}" schedule
    exclude='[]'
    if json_get JOBS_DOC "$i.exclude" ns; then
      vmid_list "$REPLY" || { log "backups: job $id has an exclude list that is not vmids; left out"; continue; }
      exclude="$REPLY"
    fi
    if flag_set JOBS_DOC "$i.all"; then
      vmids='"all"'
    elif json_get JOBS_DOC "$i.vmid" ns; then
      vmid_list "$REPLY" || { log "backups: job $id has a vmid list that is not vmids; left out"; continue; }
      vmids="$REPLY"
    elif json_str JOBS_DOC "$i.pool"; then
      pool_vmids "$REPLY" || { log "backups: the guests of pool $REPLY (job $id) could not be listed; backups are not reported"; return 1; }
      vmids="$REPLY"
    else
      vmids='[]'
    fi
    storage=null
    if json_str JOBS_DOC "$i.storage" && [[ "$REPLY" =~ $STORAGE_RE ]]; then storage="\"$REPLY\""; fi
    json+="${json:+,}{\"id\":\"$id\",\"enabled\":$enabled,\"schedule\":$schedule,\"vmids\":$vmids,\"exclude\":$exclude,\"storage\":$storage}"
    n=$((n + 1))
  done
  REPLY="[$json]"
}

# The backup volumes of storage $2 on node $1, one line each (`vmid ctime volid json`), appended to
# file $3; 1 when pvesh could not list them.
backup_volumes() {
  local node="$1" s="$2" raw="$WORK_DIR/pvesh-backups.json" count i volid vmid ctime size protected verified
  if ! timeout 120 pvesh get "/nodes/$node/storage/$s/content" --content backup --output-format json >"$raw" 2>/dev/null ||
    (($(stat -c %s "$raw") > 67108864)) || ! json_parse BACKUP_DOC "$raw" || ! json_get BACKUP_DOC . a; then
    log "backups: the backups on storage $s could not be listed; backups are not reported"
    return 1
  fi
  count="$REPLY"
  for ((i = 0; i < count; i++)); do
    if json_str BACKUP_DOC "$i.content" && [[ "$REPLY" != backup ]]; then continue; fi
    { json_str BACKUP_DOC "$i.volid" && [[ "$REPLY" =~ $BACKUP_VOLID_RE && "$REPLY" == "$s:"* ]]; } || continue
    volid="$REPLY"
    # A backup of no guest (a host backup on Proxmox Backup Server) is no guest's.
    { json_get BACKUP_DOC "$i.vmid" ns && [[ "$REPLY" =~ ^[1-9][0-9]{0,8}$ ]]; } || continue
    vmid="$REPLY"
    { json_get BACKUP_DOC "$i.ctime" ns && [[ "$REPLY" =~ ^[0-9]{1,12}$ ]]; } || continue
    ctime=$((10#$REPLY))
    size=0
    if byte_count BACKUP_DOC "$i.size"; then size="$REPLY"; fi
    protected=false
    if flag_set BACKUP_DOC "$i.protected"; then protected=true; fi
    # PVE's `verification: {state, upid}` (Proxmox Backup Server only): ok or failed, else not verified.
    verified=null
    if json_str BACKUP_DOC "$i.verification.state" && [[ "$REPLY" == ok || "$REPLY" == failed ]]; then verified="\"$REPLY\""; fi
    printf '%s\t%s\t%s\t{"vmid":%s,"volid":"%s","ctime":%s,"size":%s,"storage":"%s","protected":%s,"verified":%s}\n' \
      "$vmid" "$ctime" "$volid" "$vmid" "$volid" "$ctime" "$size" "$s" "$protected" "$verified" >>"$3"
  done
}

# POST /api/agent/backups {jobs, backups} when they changed since the controller last took them.
report_backups() {
  local node lines="$WORK_DIR/backup-lines" body="$WORK_DIR/backups-body.json" answer="$WORK_DIR/backups-answer.json"
  local name active words jobs backups sum
  command -v pvesh >/dev/null 2>&1 || return 0
  if [[ -n "$BACKUPS_AT" ]] && ((SECONDS - BACKUPS_AT < BACKUPS_MIN)); then return 0; fi
  node_name || return 0
  node="$REPLY"
  [[ -r "$WORK_DIR/storages" ]] || return 0
  backup_jobs "$node" || return 0
  jobs="$REPLY"
  : >"$lines"
  while read -r name active words; do
    [[ "$active" == true && "$words" == *",backup,"* ]] || continue
    backup_volumes "$node" "$name" "$lines" || return 0
  done <"$WORK_DIR/storages"
  BACKUPS_AT=$SECONDS
  # The newest BACKUPS_PER_GUEST of each guest (a storage shared by several nodes lists a volume
  # once per node: one line per volid), then in volid order, so the same backups hash the same.
  backups="$(LC_ALL=C sort -t $'\t' -u -k3,3 "$lines" | LC_ALL=C sort -t $'\t' -k1,1n -k2,2nr -k3,3 |
    awk -F '\t' -v keep="$BACKUPS_PER_GUEST" -v most="$MAX_BACKUPS" '$1 != last { last = $1; n = 0 } ++n <= keep && ++total <= most' |
    LC_ALL=C sort -t $'\t' -k3,3 | cut -f4 | paste -sd, -)"
  printf '{"jobs":%s,"backups":[%s]}' "$jobs" "$backups" >"$body"
  sum="$(sha256sum <"$body")"
  sum="${sum%% *}"
  [[ "$sum" != "$BACKUPS_SENT" ]] || return 0
  if http POST /api/agent/backups "$answer" "$body" "$HOST_TOKEN" && [[ "$HTTP_CODE" == 2?? ]]; then
    BACKUPS_SENT="$sum"
  else
    log "backups: not taken (${HTTP_CODE:-no answer}); sent again with the next heartbeat"
    BACKUPS_AT=''
  fi
}

# ---------------------------------------------------------------------------------------------
# Scripts (PRODUCT.md "Collections, scripts, campaigns and release channels"): the body's SHA-256
# checked, then `<interpreter> -s` reading the body on standard input: on the host only when the
# installer was given --allow-scripts (a file in this agent's own state folder, which nothing the
# controller sends can write), in a container through `pct exec`, in a VM through its guest agent.

readonly SCRIPTS_NOT_ALLOWED='scripts are not allowed on this host'
readonly ALLOW_SCRIPTS_FILE="$STATE_DIR/allow_scripts"

# `true` when this host was installed with --allow-scripts, else `false` (the heartbeat's allows_scripts).
allows_scripts() { if [[ -f "$ALLOW_SCRIPTS_FILE" ]]; then printf true; else printf false; fi; }

# Reads and checks the script command at path $2 of the parsed document $1 into the S_ variables and
# its body into file $3; 1 with the reason in REPLY when it is refused (then nothing runs).
S_SHA='' S_INTERPRETER='' S_TIMEOUT=0 S_VMID='' S_TYPE=''
script_check() {
  local doc="$1" at="$2"
  command_field "$doc" "$at.sha256" s || return 1
  [[ "$REPLY" =~ ^[0-9a-f]{64}$ ]] || { REPLY='invalid sha256'; return 1; }
  S_SHA="$REPLY"
  command_field "$doc" "$at.interpreter" s || return 1
  case "$REPLY" in bash | sh | python3) S_INTERPRETER="$REPLY" ;; *) REPLY='unknown interpreter'; return 1 ;; esac
  command_field "$doc" "$at.timeout_s" n || return 1
  if ! [[ "$REPLY" =~ ^[1-9][0-9]{0,3}$ ]] || ((REPLY > 3600)); then REPLY='timeout_s must be from 1 to 3600'; return 1; fi
  S_TIMEOUT="$REPLY"
  command_field "$doc" "$at.vmid" n optional || return 1
  S_VMID="$REPLY" S_TYPE=''
  if [[ -n "$S_VMID" ]]; then
    [[ "$S_VMID" =~ ^[1-9][0-9]{0,14}$ ]] || { REPLY='invalid vmid'; return 1; }
    listed_guest "$S_VMID" || { REPLY="guest $S_VMID is not one this host listed"; return 1; }
    S_TYPE="$REPLY"
  fi
  command_field "$doc" "$at.body" s || return 1
  printf '%s' "$REPLY" >"$3"
}

# The result of `qm guest exec` (its JSON on stdout, file $1) as the script's own: its output and
# error into file $2, its exit code returned; a run the guest agent had not finished is 124.
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A GUEST_EXEC=()
guest_exec_result() {
  local code
  if ! json_parse GUEST_EXEC "$1" || ! json_get GUEST_EXEC . o; then
    cat "$1" >>"$2"
    printf '\nhomefleet-agent: qm guest exec answered no JSON\n' >>"$2"
    return 1
  fi
  if json_str GUEST_EXEC out-data; then printf '%s' "$REPLY" >>"$2"; fi
  if json_str GUEST_EXEC err-data; then printf '%s' "$REPLY" >>"$2"; fi
  if ! json_int GUEST_EXEC exited || [[ "$REPLY" != 1 ]]; then
    printf '\nhomefleet-agent: the script did not finish within %ss\n' "$S_TIMEOUT" >>"$2"
    return 124
  fi
  if ! json_int GUEST_EXEC exitcode || ! [[ "$REPLY" =~ ^[0-9]{1,3}$ ]]; then
    printf '\nhomefleet-agent: the guest agent gave no exit code\n' >>"$2"
    return 1
  fi
  code=$((10#$REPLY))
  return $((code > 255 ? 1 : code))
}

# Runs the script command at path $2 of the parsed document $1, its output into file $3, in the
# scratch folder $4; returns the exit code to report (REFUSED when nothing ran).
run_script() {
  local body="$4/body" answer="$4/guest-exec.json" sum code=0
  if ! script_check "$1" "$2" "$body"; then
    printf 'refused by the agent: %s\n' "$REPLY" >"$3"
    return "$REFUSED"
  fi
  # "on the host only when the host was installed with --allow-scripts", and then exactly this.
  if [[ -z "$S_VMID" && ! -f "$ALLOW_SCRIPTS_FILE" ]]; then
    printf '%s' "$SCRIPTS_NOT_ALLOWED" >"$3"
    return "$REFUSED"
  fi
  sum="$(sha256sum <"$body")"
  if [[ "${sum%% *}" != "$S_SHA" ]]; then
    printf 'refused by the agent: the body does not match its SHA-256 (got %s, the controller said %s)\n' "${sum%% *}" "$S_SHA" >"$3"
    return "$REFUSED"
  fi
  : >"$3"
  case "$S_TYPE" in
    '')
      # A clean environment: the script sees nothing of the agent's own.
      (cd / && timeout --kill-after=15 "$S_TIMEOUT" env -i "PATH=$PATH" "HOME=${HOME:-/root}" "$S_INTERPRETER" -s <"$body" >>"$3" 2>&1) || code=$?
      ;;
    lxc) timeout --kill-after=15 "$S_TIMEOUT" pct exec "$S_VMID" -- "$S_INTERPRETER" -s <"$body" >>"$3" 2>&1 || code=$? ;;
    qemu)
      # qm waits 30 s for the guest's answer unless told otherwise; the guest agent's own limit is the script's.
      timeout --kill-after=15 $((S_TIMEOUT + 30)) qm guest exec "$S_VMID" --pass-stdin 1 --timeout "$S_TIMEOUT" -- "$S_INTERPRETER" -s <"$body" >"$answer" 2>>"$3" || code=$?
      if ((code == 0)); then
        guest_exec_result "$answer" "$3" || code=$?
      else
        # Its failure message (no guest agent configured, not running) is what the result says.
        cat "$answer" >>"$3"
      fi
      ;;
  esac
  if ((code == 124)) && ! grep -q 'did not finish within' "$3"; then printf '\nhomefleet-agent: the script did not finish within %ss\n' "$S_TIMEOUT" >>"$3"; fi
  return "$code"
}

# ---------------------------------------------------------------------------------------------
# Host storage (PRODUCT.md "Host storage, downloads and the file cache"): the node's storages in
# each heartbeat, the volumes of the listed contents sent when they change, downloads onto a
# storage through Proxmox's own download-url, and cached files fetched from the controller.

readonly LISTED_CONTENTS=' iso vztmpl snippets import '
readonly MAX_STORAGES=100 MAX_VOLUMES=10000
readonly VOLID_RE='^[A-Za-z][A-Za-z0-9_.-]{0,63}:[A-Za-z0-9][A-Za-z0-9._+/-]{0,300}$'
readonly FILE_NAME_RE='^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$'
# A storage's volumes are listed again when a download or upload onto it finished, when its used
# bytes changed and its last listing is at least VOLUMES_MIN old, and in any case every
# VOLUMES_MAX_AGE_S (a file replaced by one of the same size): `pvesh get .../content` starts a
# Perl interpreter and reads the whole folder, too slow for every heartbeat (the used bytes of a
# storage on the root file system change with every log line).
readonly VOLUMES_MAX_AGE_S=600
VOLUMES_MIN="$(bounded_int "${HOMEFLEET_VOLUMES_MIN_S:-}" 0 600 60)"
readonly DOWNLOAD_LIMIT_S=3600 UPLOAD_LIMIT_S=21600 UPLOAD_TRIES=5
STALL_S="$(bounded_int "${HOMEFLEET_STALL_S:-}" 1 600 60)"

# A whole number of bytes (PVE 6 writes some as strings) at path $2 of the parsed document $1, into REPLY.
byte_count() { json_get "$1" "$2" ns && [[ "$REPLY" =~ ^[0-9]{1,15}$ ]] && REPLY=$((10#$REPLY)); }

# PVE's 0/1 flags (1, "1" or true) at path $2 of the parsed document $1: 0 when set.
flag_set() { json_get "$1" "$2" nsb && [[ "$REPLY" == 1 || "$REPLY" == true ]]; }

# `"storages":[...],"storage_sha256":...,` for the heartbeat into STORAGES_FIELD ('' when pvesh
# could not list them: the fields are left out, not sent empty), the enabled storages into
# $WORK_DIR/storages (`name active ,content,...,` a line: what downloads and uploads may use) and
# the storages whose volumes are listed into LISTED_STORAGES. $1: this host's name.
STORAGES_FIELD=''
LISTED_STORAGES=()
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A STORAGE_DOC=() VOLUME_DOC=()
declare -A VOL_USED=() VOL_AT=() VOL_SHA=() VOL_SENT=()
collect_storages() {
  local node="${1%%.*}" file="$WORK_DIR/pvesh-storage.json" count i n=0 name type words c contents json=''
  local active shared avail total used lines='' sum kinds
  local -a parts
  local -A seen=()
  STORAGES_FIELD=''
  LISTED_STORAGES=()
  command -v pvesh >/dev/null 2>&1 && [[ "$node" =~ ^[A-Za-z0-9_-]{1,63}$ ]] || return 0
  if ! timeout 30 pvesh get "/nodes/$node/storage" --output-format json >"$file" 2>/dev/null; then
    log "storages: pvesh get /nodes/$node/storage failed; storages are left out of this heartbeat"
    return 0
  fi
  if ! json_parse STORAGE_DOC "$file" || ! json_get STORAGE_DOC . a; then
    log "storages: pvesh get /nodes/$node/storage did not print a JSON list; storages are left out of this heartbeat"
    return 0
  fi
  count="$REPLY"
  : >"$WORK_DIR/storages.tmp"
  for ((i = 0; i < count && n < MAX_STORAGES; i++)); do
    { json_str STORAGE_DOC "$i.storage" && [[ "$REPLY" =~ $STORAGE_RE && -z "${seen[$REPLY]-}" ]]; } || continue
    name="$REPLY"
    # "leave out disabled storages" (a storage without the flag is enabled).
    if json_get STORAGE_DOC "$i.enabled" nsb && ! flag_set STORAGE_DOC "$i.enabled"; then continue; fi
    { json_str STORAGE_DOC "$i.type" && [[ "$REPLY" =~ ^[a-z][a-z0-9]{0,31}$ ]]; } || continue
    type="$REPLY"
    seen[$name]=1
    words=',' contents='' kinds=0
    if json_str STORAGE_DOC "$i.content"; then
      IFS=, read -r -a parts <<<"$REPLY"
      for c in ${parts[@]+"${parts[@]}"}; do
        # At most 16 contents, each a lower-case word (what the controller takes).
        [[ "$c" =~ ^[a-z]{1,16}$ && "$words" != *",$c,"* && $kinds -lt 16 ]] || continue
        kinds=$((kinds + 1))
        words+="$c,"
        contents+="${contents:+,}\"$c\""
      done
    fi
    active=false shared=false avail=null total=null used=''
    if flag_set STORAGE_DOC "$i.active"; then active=true; fi
    if flag_set STORAGE_DOC "$i.shared"; then shared=true; fi
    if byte_count STORAGE_DOC "$i.avail"; then avail="$REPLY"; fi
    if byte_count STORAGE_DOC "$i.total"; then total="$REPLY"; fi
    if byte_count STORAGE_DOC "$i.used"; then used="$REPLY"; fi
    json+="${json:+,}{\"storage\":\"$name\",\"type\":\"$type\",\"content\":[$contents],\"avail\":$avail,\"total\":$total,\"active\":$active,\"shared\":$shared}"
    printf '%s %s %s\n' "$name" "$active" "$words" >>"$WORK_DIR/storages.tmp"
    n=$((n + 1))
    [[ "$active" == true ]] || continue
    for c in $LISTED_CONTENTS; do
      [[ "$words" == *",$c,"* ]] || continue
      if list_volumes "$node" "$name" "$used"; then
        LISTED_STORAGES+=("$name")
        lines+="$name ${VOL_SHA[$name]}"$'\n'
      fi
      break
    done
  done
  mv -f "$WORK_DIR/storages.tmp" "$WORK_DIR/storages"
  sum=null
  if [[ -n "$lines" ]]; then
    sum="$(printf '%s' "$lines" | sha256sum)"
    sum="\"${sum%% *}\""
  fi
  STORAGES_FIELD="\"storages\":[$json],\"storage_sha256\":$sum,"
}

# The volumes of the listed contents of storage $2 on node $1 (whose used bytes are $3), in their
# canonical form (a JSON list sorted by volid, each {volid, format, size, ctime}), into
# $WORK_DIR/volumes/$2, their SHA-256 into VOL_SHA[$2]. 1 when they have never been listed.
list_volumes() {
  local node="$1" s="$2" used="$3" file="$WORK_DIR/volumes/$2" raw="$WORK_DIR/pvesh-content.json" age
  local count i kept=0 volid format size ctime lines='' sorted sum
  mkdir -p "$WORK_DIR/volumes" "$WORK_DIR/storage-stale"
  if [[ -f "$file" && ! -e "$WORK_DIR/storage-stale/$s" ]]; then
    age=$((SECONDS - ${VOL_AT[$s]:-0}))
    if ((age < VOLUMES_MAX_AGE_S)) && { [[ "$used" == "${VOL_USED[$s]-}" ]] || ((age < VOLUMES_MIN)); }; then return 0; fi
  fi
  rm -f "$WORK_DIR/storage-stale/$s"
  if ! timeout 60 pvesh get "/nodes/$node/storage/$s/content" --output-format json >"$raw" 2>/dev/null ||
    (($(stat -c %s "$raw") > 67108864)) || ! json_parse VOLUME_DOC "$raw" || ! json_get VOLUME_DOC . a; then
    log "storage $s: its volumes could not be listed; the last listing is kept"
    [[ -f "$file" ]]
    return
  fi
  count="$REPLY"
  for ((i = 0; i < count; i++)); do
    { json_str VOLUME_DOC "$i.content" && [[ "$LISTED_CONTENTS" == *" $REPLY "* ]]; } || continue
    # A name the controller would refuse (a space, a bracket) is left out rather than sinking the list.
    { json_str VOLUME_DOC "$i.volid" && [[ "$REPLY" =~ $VOLID_RE && "$REPLY" == "$s:"* ]]; } || continue
    volid="$REPLY"
    { json_str VOLUME_DOC "$i.format" && [[ "$REPLY" =~ ^[a-z0-9.]{1,32}$ ]]; } || continue
    format="$REPLY"
    byte_count VOLUME_DOC "$i.size" || continue
    size="$REPLY"
    ctime=null
    if json_get VOLUME_DOC "$i.ctime" ns && [[ "$REPLY" =~ ^[0-9]{1,12}$ ]]; then ctime=$((10#$REPLY)); fi
    if ((kept == MAX_VOLUMES)); then
      log "storage $s: more than $MAX_VOLUMES volumes; the first $MAX_VOLUMES are reported"
      break
    fi
    kept=$((kept + 1))
    lines+="$volid"$'\t'"{\"volid\":\"$volid\",\"format\":\"$format\",\"size\":$size,\"ctime\":$ctime}"$'\n'
  done
  sorted=''
  if [[ -n "$lines" ]]; then sorted="$(printf '%s' "$lines" | LC_ALL=C sort -t $'\t' -k1,1 | cut -f2- | paste -sd, -)"; fi
  printf '[%s]' "$sorted" >"$file.tmp" && mv -f "$file.tmp" "$file"
  sum="$(sha256sum <"$file")"
  VOL_SHA[$s]="${sum%% *}"
  VOL_USED[$s]="$used"
  VOL_AT[$s]=$SECONDS
}

# POST /api/agent/storage {storage, volumes} for each listed storage whose volumes changed since the
# controller last took them; one it did not take is sent again with the next heartbeat.
upload_volumes() {
  local s body="$WORK_DIR/storage-body.json" answer="$WORK_DIR/storage-answer.json"
  for s in ${LISTED_STORAGES[@]+"${LISTED_STORAGES[@]}"}; do
    [[ "${VOL_SENT[$s]-}" != "${VOL_SHA[$s]}" ]] || continue
    { printf '{"storage":"%s","volumes":' "$s" && cat "$WORK_DIR/volumes/$s" && printf '}'; } >"$body"
    if http POST /api/agent/storage "$answer" "$body" "$HOST_TOKEN" && [[ "$HTTP_CODE" == 2?? ]]; then
      VOL_SENT[$s]="${VOL_SHA[$s]}"
    else
      log "volumes of storage $s: not taken (${HTTP_CODE:-no answer}); sent again with the next heartbeat"
    fi
  done
}

# Storage $1 as this host's last heartbeat listed it: 0 with its contents (`,iso,vztmpl,`) in
# REPLY; 1 with the reason in REPLY when it did not list it or it is not active.
listed_storage() {
  local name active words
  if [[ -r "$WORK_DIR/storages" ]]; then
    while read -r name active words; do
      [[ "$name" == "$1" ]] || continue
      [[ "$active" == true ]] || { REPLY="storage $1 is not active"; return 1; }
      REPLY="$words"
      return 0
    done <"$WORK_DIR/storages"
  fi
  REPLY="storage $1 is not one this host listed"
  return 1
}

# The storage field (pattern, listed, active) and the content field (one of $2, held by that
# storage) of the command at path $1 of the parsed document CMD_DOC, into CMD_STORAGE and CMD_CONTENT.
CMD_DOC='' CMD_STORAGE='' CMD_CONTENT=''
storage_and_content() {
  command_field "$CMD_DOC" "$1.storage" s || return 1
  [[ "$REPLY" =~ $STORAGE_RE ]] || { REPLY='invalid storage'; return 1; }
  CMD_STORAGE="$REPLY"
  command_field "$CMD_DOC" "$1.content" s || return 1
  [[ " $2 " == *" $REPLY "* ]] || { REPLY="content must be one of: $2"; return 1; }
  CMD_CONTENT="$REPLY"
  listed_storage "$CMD_STORAGE" || return 1
  [[ "$REPLY" == *",$CMD_CONTENT,"* ]] || { REPLY="storage $CMD_STORAGE does not hold $CMD_CONTENT"; return 1; }
}

# This host's Proxmox node name into REPLY; 1 when it has none.
node_name() {
  REPLY="$(host_name)"
  REPLY="${REPLY%%.*}"
  [[ "$REPLY" =~ ^[A-Za-z0-9_-]{1,63}$ ]]
}

# Reads and checks the download command at path $2 of the parsed document $1 into ARGV (the
# pvesh create argument list); 1 with the reason in REPLY when it is refused.
download_check() {
  local at="$2" url authority filename sum algorithm
  CMD_DOC="$1"
  storage_and_content "$at" 'iso vztmpl import' || return 1
  command_field "$CMD_DOC" "$at.url" s || return 1
  url="$REPLY"
  # http or https, no whitespace or control characters, and no user:password@ (a credential would
  # end up in Proxmox's task log).
  [[ ${#url} -le 2048 && "${url,,}" =~ ^https?://[^[:space:][:cntrl:]]+$ && "$url" != *[[:space:][:cntrl:]]* ]] ||
    { REPLY='url must be an http or https URL'; return 1; }
  authority="${url#*://}"
  authority="${authority%%[/?#]*}"
  [[ -n "$authority" && "$authority" != *@* ]] || { REPLY='url must name a host, without user information'; return 1; }
  command_field "$CMD_DOC" "$at.filename" s || return 1
  [[ "$REPLY" =~ $FILE_NAME_RE ]] || { REPLY='filename must be a file name without a path'; return 1; }
  filename="$REPLY"
  node_name || { REPLY='this host has no node name'; return 1; }
  ARGV=(pvesh create "/nodes/$REPLY/storage/$CMD_STORAGE/download-url" --url "$url" --filename "$filename" --content "$CMD_CONTENT")
  command_field "$CMD_DOC" "$at.checksum" s optional || return 1
  sum="$REPLY"
  command_field "$CMD_DOC" "$at.checksum_algorithm" s optional || return 1
  algorithm="$REPLY"
  [[ -z "$sum" && -z "$algorithm" ]] && return 0
  [[ -n "$sum" && -n "$algorithm" ]] || { REPLY='checksum and checksum_algorithm go together'; return 1; }
  case "$algorithm" in
    sha256) [[ "$sum" =~ ^[0-9a-fA-F]{64}$ ]] || { REPLY='checksum must be a SHA-256 in hex'; return 1; } ;;
    sha512) [[ "$sum" =~ ^[0-9a-fA-F]{128}$ ]] || { REPLY='checksum must be a SHA-512 in hex'; return 1; } ;;
    *) REPLY='checksum_algorithm must be sha256 or sha512'; return 1 ;;
  esac
  ARGV+=(--checksum "$sum" --checksum-algorithm "$algorithm")
}

# Runs the download command at path $2 of the parsed document $1, its output into file $3, in the
# scratch folder $4; returns the exit code to report. pvesh runs a task synchronously on the command
# line and prints its log, then its id (UPID), and exits 0 even when the task failed: the outcome is
# the task's exitstatus, read with `pvesh get /nodes/<node>/tasks/<upid>/status` (polled while it
# still runs, within the time limit).
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A TASK_DOC=()
run_download() {
  local out="$3" dir="$4" code=0 line upid='' node status deadline=$((SECONDS + DOWNLOAD_LIMIT_S))
  if ! download_check "$1" "$2"; then
    printf 'refused by the agent: %s\n' "$REPLY" >"$out"
    return "$REFUSED"
  fi
  node="${ARGV[2]#/nodes/}"
  node="${node%%/*}"
  printf '$ %s\n' "${ARGV[*]}" >"$out"
  timeout --kill-after=15 "$DOWNLOAD_LIMIT_S" "${ARGV[@]}" </dev/null >"$dir/stdout" 2>>"$out" || code=$?
  cat "$dir/stdout" >>"$out"
  if ((code != 0)); then
    if ((code == 124)); then printf 'homefleet-agent: the download did not finish within %ss\n' "$DOWNLOAD_LIMIT_S" >>"$out"; fi
    return "$code"
  fi
  : >"$WORK_DIR/storage-stale/$CMD_STORAGE" 2>/dev/null || true
  while IFS= read -r line; do
    if [[ "$line" =~ ^UPID:[^[:space:]/]{1,250}$ ]]; then upid="$line"; fi
  done <"$dir/stdout"
  [[ -n "$upid" ]] || { printf 'homefleet-agent: pvesh printed no task id (UPID)\n' >>"$out"; return 1; }
  while :; do
    status=''
    if timeout 30 pvesh get "/nodes/$node/tasks/$upid/status" --output-format json >"$dir/task.json" 2>>"$out" &&
      json_parse TASK_DOC "$dir/task.json" && json_str TASK_DOC status; then
      status="$REPLY"
    fi
    [[ "$status" == running ]] || break
    ((SECONDS < deadline)) || { printf 'homefleet-agent: the download task did not finish within %ss\n' "$DOWNLOAD_LIMIT_S" >>"$out"; return 124; }
    sleep 2
  done
  [[ "$status" == stopped ]] || { printf 'homefleet-agent: the status of task %s could not be read\n' "$upid" >>"$out"; return 1; }
  json_str TASK_DOC exitstatus || REPLY=''
  case "$REPLY" in
    OK | WARNINGS*) printf 'homefleet-agent: task %s ended: %s\n' "$upid" "$REPLY" >>"$out" ;;
    *) printf 'homefleet-agent: task %s failed: %s\n' "$upid" "${REPLY:-no exit status}" >>"$out"; return 1 ;;
  esac
}

# The upload command being run: its fields, its temp files, its output.
U_ID='' U_NAME='' U_SIZE='' U_SHA='' U_REPLACE='' U_TMP='' U_PART='' U_OUT=''

# Reads and checks the upload command at path $2 of the parsed document $1 into the U_ variables;
# 1 with the reason in REPLY when it is refused.
upload_check() {
  local at="$2"
  CMD_DOC="$1"
  command_field "$CMD_DOC" "$at.file_id" n || return 1
  [[ "$REPLY" =~ ^[1-9][0-9]{0,14}$ ]] || { REPLY='invalid file_id'; return 1; }
  U_ID="$REPLY"
  command_field "$CMD_DOC" "$at.name" s || return 1
  [[ "$REPLY" =~ $FILE_NAME_RE ]] || { REPLY='name must be a file name without a path'; return 1; }
  U_NAME="$REPLY"
  command_field "$CMD_DOC" "$at.size" n || return 1
  U_SIZE="$REPLY"
  command_field "$CMD_DOC" "$at.sha256" s || return 1
  [[ "$REPLY" =~ ^[0-9a-f]{64}$ ]] || { REPLY='sha256 must be 64 lower-case hex digits'; return 1; }
  U_SHA="$REPLY"
  command_field "$CMD_DOC" "$at.replace" b optional || return 1
  U_REPLACE="${REPLY:-false}"
  storage_and_content "$at" 'iso vztmpl snippets import'
}

# The status code and, for a 206, the first byte of the last answer whose headers curl wrote to $1,
# into REPLY ("206 1024", "200 -", "" when there is none).
answer_status() {
  local line status='' start=-
  [[ -r "$1" ]] || { REPLY=''; return 0; }
  while IFS= read -r line; do
    line="${line%$'\r'}"
    if [[ "$line" =~ ^HTTP/[0-9.]+\ ([0-9]{3}) ]]; then status="${BASH_REMATCH[1]}" start=-; fi
    if [[ "${line,,}" =~ ^content-range:\ *bytes\ ([0-9]{1,16})- ]]; then start="${BASH_REMATCH[1]}"; fi
  done <"$1"
  REPLY="${status:+$status $start}"
}

# Fetches GET /api/agent/files/<U_ID> into U_TMP, resuming with `Range: bytes=<have>-` after a
# broken transfer (at most UPLOAD_TRIES requests). The host token reaches curl on its config on
# stdin, never on its command line. 1 with the reason in REPLY.
fetch_upload() {
  local try have target config code status start headers="$U_TMP.headers" deadline=$((SECONDS + UPLOAD_LIMIT_S))
  local -a args
  for ((try = 1; try <= UPLOAD_TRIES; try++)); do
    have="$(stat -c %s "$U_TMP")"
    ((have < U_SIZE)) || return 0
    ((SECONDS < deadline)) || { REPLY="the transfer did not finish within ${UPLOAD_LIMIT_S}s"; return 1; }
    config="header = \"Authorization: Bearer $HOST_TOKEN\""
    target="$U_TMP"
    if ((have > 0)); then
      config+=$'\n'"header = \"Range: bytes=$have-\""
      target="$U_PART"
      printf 'homefleet-agent: resuming at byte %s\n' "$have" >>"$U_OUT"
    fi
    : >"$U_PART"
    : >"$headers"
    # A stalled transfer (under 1 KiB/s for STALL_S) is broken off and resumed like a cut one.
    args=(-sS --proto '=http,https' --connect-timeout "$CONNECT_TIMEOUT" --max-time $((deadline - SECONDS))
      --speed-limit 1024 --speed-time "$STALL_S" -D "$headers")
    if [[ -n "$TLS_PIN" ]]; then args+=(-k --pinnedpubkey "$TLS_PIN"); fi
    code=0
    curl "${args[@]}" -K - "$SERVER_URL/api/agent/files/$U_ID" <<<"$config" >>"$target" 2>/dev/null || code=$?
    answer_status "$headers"
    status="${REPLY% *}" start="${REPLY#* }"
    case "$status" in
      206)
        if [[ "$target" == "$U_PART" && "$start" == "$have" ]]; then
          cat "$U_PART" >>"$U_TMP"
        else
          truncate -s "$have" "$U_TMP"
        fi
        ;;
      200)
        # The whole file from its start (the server did not take the range).
        if [[ "$target" == "$U_PART" ]]; then mv -f "$U_PART" "$U_TMP"; fi
        ;;
      401 | 403 | 404 | 409 | 410)
        REPLY="the controller refused the file ($status)"
        return 1
        ;;
      *)
        truncate -s "$have" "$U_TMP"
        printf 'homefleet-agent: the controller did not answer with the file (%s, curl exit %s)\n' "${status:-no answer}" "$code" >>"$U_OUT"
        ;;
    esac
    if ((code != 0)); then printf 'homefleet-agent: the transfer broke off (curl exit %s)\n' "$code" >>"$U_OUT"; fi
    if ((try < UPLOAD_TRIES)) && (($(stat -c %s "$U_TMP") < U_SIZE)); then sleep $((try - 1)); fi
  done
  have="$(stat -c %s "$U_TMP")"
  ((have >= U_SIZE)) || { REPLY="the transfer broke off $UPLOAD_TRIES times; $have of $U_SIZE bytes arrived"; return 1; }
}

# Places the fetched file: the folder `pvesm path` names for <storage>:<content>/<name>, an existing
# file of that name left alone unless it holds the same bytes or replace was asked, a temp file in
# that folder checked for size and SHA-256 and renamed into place. 1 with the reason in REPLY.
place_upload() {
  local volume="$CMD_STORAGE:$CMD_CONTENT/$U_NAME" path='' folder sum avail
  path="$(timeout 30 pvesm path "$volume" 2>>"$U_OUT")" || { REPLY="pvesm path $volume failed"; return 1; }
  path="${path%%$'\n'*}"
  [[ "$path" == /*"/$U_NAME" && "$path" != *[[:cntrl:]]* && "$path" != */../* && "$path" != */./* ]] ||
    { REPLY="pvesm path $volume did not print a path to $U_NAME"; return 1; }
  folder="${path%/*}"
  [[ -d "$folder" ]] || { REPLY="$folder does not exist: enable the content type $CMD_CONTENT on storage $CMD_STORAGE"; return 1; }
  if [[ -e "$path" || -L "$path" ]]; then
    [[ -f "$path" && ! -L "$path" ]] || { REPLY="exists: $path is not a regular file"; return 1; }
    sum="$(sha256sum <"$path")"
    if [[ "${sum%% *}" == "$U_SHA" ]]; then
      printf 'homefleet-agent: %s is already there with the same SHA-256; nothing to do\n' "$volume" >>"$U_OUT"
      return 0
    fi
    [[ "$U_REPLACE" == true ]] || { REPLY="exists: $path holds other bytes (push with replace to overwrite it)"; return 1; }
  fi
  avail="$(df -P -B1 "$folder" 2>/dev/null | tail -n 1)"
  read -r _ _ _ avail _ <<<"$avail"
  if [[ "$avail" =~ ^[0-9]{1,20}$ ]] && ((avail < U_SIZE)); then REPLY="not enough space in $folder: $avail bytes free, $U_SIZE needed"; return 1; fi
  U_TMP="$(mktemp "$folder/.homefleet-upload.XXXXXX")" || { REPLY="could not write in $folder"; return 1; }
  U_PART="$(mktemp "$folder/.homefleet-upload.XXXXXX")" || { REPLY="could not write in $folder"; return 1; }
  fetch_upload || return 1
  (($(stat -c %s "$U_TMP") == U_SIZE)) || { REPLY="the file has $(stat -c %s "$U_TMP") bytes, the controller said $U_SIZE"; return 1; }
  sum="$(sha256sum <"$U_TMP")"
  [[ "${sum%% *}" == "$U_SHA" ]] || { REPLY="SHA-256 mismatch: got ${sum%% *}, the controller said $U_SHA"; return 1; }
  chmod 0644 "$U_TMP" || { REPLY="could not set the mode of $U_TMP"; return 1; }
  if [[ "$U_REPLACE" == true ]]; then
    mv -f "$U_TMP" "$path" || { REPLY="could not rename the file into $path"; return 1; }
  else
    # A link fails when the name exists: a file that appeared meanwhile is not overwritten.
    ln "$U_TMP" "$path" 2>/dev/null || { REPLY="exists: $path appeared during the transfer"; return 1; }
  fi
  printf 'homefleet-agent: %s written (%s bytes, SHA-256 %s)\n' "$volume" "$U_SIZE" "$U_SHA" >>"$U_OUT"
}

# Runs the upload command at path $2 of the parsed document $1, its output into file $3; returns
# the exit code to report. Whatever happens, no temp file is left in the storage's folder.
run_upload() {
  local code=0
  U_OUT="$3" U_TMP='' U_PART=''
  if ! upload_check "$1" "$2"; then
    printf 'refused by the agent: %s\n' "$REPLY" >"$U_OUT"
    return "$REFUSED"
  fi
  : >"$U_OUT"
  place_upload || code=1
  if [[ -n "$U_TMP" ]]; then rm -f "$U_TMP" "$U_TMP.headers"; fi
  if [[ -n "$U_PART" ]]; then rm -f "$U_PART"; fi
  : >"$WORK_DIR/storage-stale/$CMD_STORAGE" 2>/dev/null || true
  if ((code != 0)); then printf 'homefleet-agent: %s\n' "$REPLY" >>"$U_OUT"; fi
  return "$code"
}

# The last 64 KiB of file $1 that start at a line, into file $2: the first line of a cut is partial
# and is dropped (with the extra byte read, a cut that falls just after a newline drops nothing).
tail_lines() {
  if (($(stat -c %s "$1") <= MAX_OUTPUT_BYTES)); then
    cp "$1" "$2"
  else
    tail -c $((MAX_OUTPUT_BYTES + 1)) "$1" | sed 1d >"$2"
  fi
}

# Runs the command at path $2 of the parsed document $1 ({"type":"guest.action"|"logs",
# "operation_id", ...}) and reports its result.
run_command() {
  local doc="$1" at="$2" operation code=0 dir out
  { json_str "$doc" "$at.operation_id" && [[ "$REPLY" =~ ^[A-Za-z0-9_-]{1,128}$ ]]; } || { log "command: invalid operation_id; ignored"; return 0; }
  operation="$REPLY"
  private_dir "$WORK_DIR/op.XXXXXX" || return 0
  dir="$REPLY"
  out="$dir/output"
  json_str "$doc" "$at.type" || REPLY=''
  case "$REPLY" in
    logs)
      timeout 30 journalctl -u "$AGENT_UNIT" -n 200 --no-pager -o short-iso >"$dir/journal" 2>&1 || code=$?
      tail_lines "$dir/journal" "$out"
      ;;
    guest.action)
      if guest_argv "$doc" "$at"; then
        log "operation $operation: ${ARGV[*]}"
        timeout --kill-after=15 "$LIMIT" "${ARGV[@]}" </dev/null >"$out" 2>&1 || code=$?
        if ((code == 124)); then printf '\nhomefleet-agent: %s did not finish within %ss\n' "${ARGV[1]}" "$LIMIT" >>"$out"; fi
      else
        log "operation $operation refused: $REPLY"
        printf 'refused by the agent: %s\n' "$REPLY" >"$out"
        code=$REFUSED
      fi
      ;;
    deploy)
      log "operation $operation: deploy"
      run_deploy "$doc" "$at" "$out" "$dir" || code=$?
      if ((code == REFUSED)); then log "operation $operation refused: $(head -c 300 "$out")"; fi
      ;;
    download)
      log "operation $operation: download"
      run_download "$doc" "$at" "$out" "$dir" || code=$?
      if ((code == REFUSED)); then log "operation $operation refused: $(head -c 300 "$out")"; fi
      ;;
    upload)
      log "operation $operation: upload"
      run_upload "$doc" "$at" "$out" || code=$?
      if ((code == REFUSED)); then log "operation $operation refused: $(head -c 300 "$out")"; fi
      ;;
    script)
      log "operation $operation: script"
      run_script "$doc" "$at" "$out" "$dir" || code=$?
      if ((code == REFUSED)); then log "operation $operation refused: $(head -c 300 "$out")"; fi
      ;;
    *) log "command: unknown type; ignored"; rm -rf "$dir"; return 0 ;;
  esac
  send_result "$operation" "$code" "$out" "$dir"
  rm -rf "$dir"
}

# POST the result of operation $1 (exit code $2, output file $3, scratch folder $4) until the server
# takes it: a repeat is harmless (the server keeps the first), a refusal (4xx) is final.
send_result() {
  local operation="$1" code="$2" output body="$4/result.json" answer="$4/answer" delay=1 try
  # The last 64 KiB: the most the server keeps (of a guest action's output it keeps less).
  # The x keeps a trailing newline that $(...) would drop.
  output="$(tail -c "$MAX_OUTPUT_BYTES" "$3" 2>/dev/null || true; printf x)"
  json_string "${output%x}" output
  printf '{"exit_code":%s,"output":%s,"finished_at":"%s"}' "$code" "$output" "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" >"$body"
  for ((try = 1; try <= RESULT_TRIES; try++)); do
    if http POST "/api/agent/operations/$operation/result" "$answer" "$body" "$HOST_TOKEN"; then
      case "$HTTP_CODE" in
        2??) log "operation $operation: exit $code, reported"; return 0 ;;
        429) ;;
        4??) log "operation $operation: the server refused the result ($HTTP_CODE)"; return 1 ;;
      esac
    fi
    sleep "$delay"
    delay=$((delay * 2 > 60 ? 60 : delay * 2))
  done
  log "operation $operation: the result could not be reported (${HTTP_CODE:-no answer}); the server will expire it"
  return 1
}

# The command loop: long-polls for guest actions and log requests and runs each in the background.
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A POLLED=()
command_loop() {
  local answer="$WORK_DIR/commands.json" delay=$INTERVAL_MIN count i
  trap - EXIT
  while :; do
    rm -f "$answer"
    if HTTP_MAX_TIME=$((POLL_WAIT + CURL_MAX_TIME)) http GET "/api/agent/commands?wait=$POLL_WAIT" "$answer" '' "$HOST_TOKEN"; then
      case "$HTTP_CODE" in
        200)
          delay=$INTERVAL_MIN
          count=0
          if [[ -f "$answer" ]] && (($(stat -c %s "$answer") <= MAX_ANSWER_BYTES)) && json_parse POLLED "$answer" && json_get POLLED commands a; then
            count="$REPLY"
          else
            log "command poll: the answer holds no JSON list of commands; ignored"
          fi
          for ((i = 0; i < count; i++)); do run_command POLLED "commands.$i" & done
          continue
          ;;
        204) delay=$INTERVAL_MIN; continue ;;
        *) log "command poll: the server answered $HTTP_CODE" ;;
      esac
    else
      log "command poll: $(no_answer)"
    fi
    # Refused or unreachable: back off (doubling up to a minute) instead of asking again at once.
    sleep "$delay"
    delay=$((delay * 2 > 60 ? 60 : delay * 2))
  done
}

# ---------------------------------------------------------------------------------------------
# Uninstall: remove what the installer put here, then confirm with the receipt token until the
# server takes it (the host token is already revoked by then). Never returns.

remove_installation() {
  if command -v systemctl >/dev/null 2>&1; then
    timeout 30 systemctl disable "$AGENT_UNIT" "$WATCHDOG_UNIT" >/dev/null 2>&1 || true
  fi
  rm -f "$UNIT_DIR/$AGENT_UNIT" "$UNIT_DIR/$WATCHDOG_UNIT"
  rm -rf "$LIB_DIR" "$STATE_DIR"
  if command -v systemctl >/dev/null 2>&1; then
    timeout 30 systemctl daemon-reload >/dev/null 2>&1 || true
  fi
}

# The uninstall command at path $2 of the parsed document $1.
run_uninstall() {
  local operation receipt delay=1 deadline out body
  json_str "$1" "$2.operation_id" || { log "uninstall: no operation_id; ignored"; return 0; }
  operation="$REPLY"
  json_str "$1" "$2.receipt_token" || { log "uninstall: no receipt_token; ignored"; return 0; }
  receipt="$REPLY"
  [[ "$operation" =~ ^[A-Za-z0-9_-]{1,128}$ ]] || { log "uninstall: invalid operation_id; ignored"; return 0; }
  [[ "$receipt" =~ ^hfr_[A-Za-z0-9_-]{20,200}$ ]] || { log "uninstall: invalid receipt token; ignored"; return 0; }
  log "uninstall: removing the agent (operation $operation)"
  # In the private work folder, which outlives the removal of the state folder.
  out="$WORK_DIR/receipt-answer.json"
  body="$WORK_DIR/receipt.json"
  printf '{}' >"$body"
  remove_installation
  log "uninstall: removed; confirming with the receipt token"
  deadline=$((SECONDS + RECEIPT_DEADLINE))
  while :; do
    if http POST "/api/agent/receipts/$operation" "$out" "$body" "$receipt" && [[ "$HTTP_CODE" == 2?? ]]; then
      log "uninstall: the server confirmed the removal"
      exit 0
    fi
    if ((SECONDS + delay > deadline)); then
      log "uninstall: the server did not take the receipt in time; giving up (an administrator can force the deletion)"
      exit 1
    fi
    log "uninstall: receipt not accepted (${HTTP_CODE:-no answer}); retrying in ${delay}s"
    sleep "$delay"
    delay=$((delay * 2))
    if ((delay > RECEIPT_MAX_DELAY)); then delay=$RECEIPT_MAX_DELAY; fi
  done
}

# ---------------------------------------------------------------------------------------------
# Upgrade

# Fetches the manifest and its signature into $1/, checks the signature with the pinned key, the
# expiry and that it was not issued before the newest manifest seen, then downloads version $2's
# file into $1/agent and checks it against its entry. 1 with the reason in REPLY.
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A MANIFEST=()
fetch_verified_release() {
  local dir="$1" version="$2" key="$STATE_DIR/manifest_public_key.pem" seen entry
  [[ -r "$key" ]] || { REPLY='no pinned manifest key'; return 1; }
  manifest_download "$dir" || return 1
  manifest_signature_ok "$dir" "$key" || return 1
  seen="$(read_state_file manifest_issued_at 2>/dev/null)" || seen=0
  manifest_read "$dir" MANIFEST "$seen" && manifest_unexpired MANIFEST || return 1
  if ((MANIFEST_ISSUED > seen)); then printf '%s\n' "$MANIFEST_ISSUED" >"$ISSUED_FILE" || true; fi
  manifest_entry MANIFEST "$version" || { REPLY="version $version is not in the verified manifest"; return 1; }
  entry="$REPLY"
  # upgradable_from: the oldest version that may upgrade to this one directly.
  if json_str MANIFEST "$entry.upgradable_from" && is_version "$REPLY" && version_lt "$HOMEFLEET_AGENT_VERSION" "$REPLY"; then
    REPLY="version $version needs at least $REPLY to upgrade from; this is $HOMEFLEET_AGENT_VERSION"
    return 1
  fi
  manifest_agent_path MANIFEST "$entry" "$version"
  http_ok GET "$REPLY" "$dir/agent" || { REPLY="could not download version $version (${HTTP_CODE:-no answer})"; return 1; }
  agent_file_ok "$dir/agent" MANIFEST "$entry" "$version"
}

start_watchdog() {
  command -v systemctl >/dev/null 2>&1 || return 1
  [[ -f "$UNIT_DIR/$WATCHDOG_UNIT" ]] || return 1
  timeout 30 systemctl reset-failed "$WATCHDOG_UNIT" >/dev/null 2>&1 || true
  timeout 30 systemctl start --no-block "$WATCHDOG_UNIT" >/dev/null 2>&1
}

# The upgrade command at path $2 of the parsed document $1.
run_upgrade() {
  local version dir rollback=false code=0
  { json_str "$1" "$2.version" && is_version "$REPLY"; } || { log "upgrade: invalid version; ignored"; return 1; }
  version="$REPLY"
  json_bool "$1" "$2.rollback" || code=$?
  case "$code" in
    0) rollback="$REPLY" ;;
    1) ;;
    *) log "upgrade: rollback must be true or false; ignored"; return 1 ;;
  esac
  [[ "$version" != "$HOMEFLEET_AGENT_VERSION" ]] || return 0
  # A downgrade only when an administrator asked for it by name: the command says rollback.
  if version_lt "$version" "$HOMEFLEET_AGENT_VERSION" && [[ "$rollback" != true ]]; then
    log "upgrade: $version is older than the running $HOMEFLEET_AGENT_VERSION and the command does not name it a rollback; refused"
    return 1
  fi
  if [[ -f "$UPGRADE_FAILED_FILE" ]] && [[ "$(sed -n 's/^version=//p' "$UPGRADE_FAILED_FILE" 2>/dev/null || true)" == "$version" ]]; then
    local failed_at
    failed_at="$(sed -n 's/^at=//p' "$UPGRADE_FAILED_FILE" 2>/dev/null || true)"
    if [[ "$failed_at" =~ ^[0-9]{1,12}$ ]] && (($(date -u +%s) - failed_at < UPGRADE_RETRY_BLOCK_S)); then
      log "upgrade: version $version was rolled back less than ${UPGRADE_RETRY_BLOCK_S}s ago; not retrying yet"
      return 1
    fi
  fi
  log "upgrade: $HOMEFLEET_AGENT_VERSION -> $version"
  [[ -f "$AGENT_FILE" ]] || { log "upgrade: $AGENT_FILE is missing; not installed by the installer"; return 1; }
  private_dir "$LIB_DIR/.upgrade.XXXXXX" || return 1
  dir="$REPLY"
  if ! fetch_verified_release "$dir" "$version"; then
    log "upgrade: $REPLY; refused"
    rm -rf "$dir"
    return 1
  fi
  # The previous version is kept for the watchdog, which runs from it, then the watchdog starts,
  # and only then is the new file put in place (a rename: this running script keeps its inode).
  { cp -p "$AGENT_FILE" "$dir/previous" && chmod 0755 "$dir/previous" && mv -f "$dir/previous" "$PREVIOUS_FILE"; } || {
    log "upgrade: could not keep the previous version"
    rm -rf "$dir"
    return 1
  }
  rm -f "$UPGRADE_OK_FILE"
  printf 'version=%s\nprevious=%s\nstarted=%s\n' "$version" "$HOMEFLEET_AGENT_VERSION" "$(date -u +%s)" >"$UPGRADE_FILE"
  if ! start_watchdog; then
    log "upgrade: the watchdog could not be started; not upgrading without it"
    rm -f "$UPGRADE_FILE"
    rm -rf "$dir"
    return 1
  fi
  chmod 0755 "$dir/agent"
  mv -f "$dir/agent" "$AGENT_FILE"
  rm -rf "$dir"
  log "upgrade: version $version installed; restarting into it"
  # Same process (so the same systemd service), a new started_at; the new version starts its own command loop.
  stop_command_loop
  remove_temp_dirs || true
  exec "$AGENT_FILE" ${ORIGINAL_ARGS[@]+"${ORIGINAL_ARGS[@]}"}
}

# ---------------------------------------------------------------------------------------------
# --repin: the controller's certificate was re-issued with a new key, so the pin no longer matches
# and nothing is sent. The person who checked the new fingerprint pins it here.

run_repin() {
  local pin old=''
  normalize_pin "$REPIN" || {
    echo "homefleet-agent: --repin takes the SHA-256 of the controller's certificate key: base64 as the dashboard shows it (sha256//<base64> or <base64>) or 64 hex digits" >&2
    return 2
  }
  pin="$REPLY"
  SERVER_URL="$(read_state_file server_url)" || { log "not installed: $STATE_DIR/server_url is missing"; return 1; }
  [[ "$SERVER_URL" == https://* ]] || { log "the agent reports to $SERVER_URL, which has no certificate to pin"; return 1; }
  old="$(read_state_file tls_pin 2>/dev/null)" || old='none'
  { printf '%s\n' "$pin" >"$STATE_DIR/tls_pin" && chmod 0600 "$STATE_DIR/tls_pin"; } 2>/dev/null ||
    { log "cannot write $STATE_DIR/tls_pin: run as root"; return 1; }
  log "pinned $pin for $SERVER_URL in $STATE_DIR/tls_pin (was $old)"
  if command -v systemctl >/dev/null 2>&1 && [[ -f "$UNIT_DIR/$AGENT_UNIT" ]]; then
    if timeout 30 systemctl try-restart "$AGENT_UNIT" >/dev/null 2>&1; then
      log "restarted $AGENT_UNIT (if it was running) to use the new pin"
    else
      log "could not restart $AGENT_UNIT: restart it to use the new pin"
    fi
  fi
}

# ---------------------------------------------------------------------------------------------
# Watchdog: runs from the previous version's copy in its own systemd unit, so restarting or
# crashing the agent's service does not take it down.

run_watchdog() {
  local version started deadline
  [[ -f "$UPGRADE_FILE" ]] || { log "watchdog: no upgrade in progress"; return 0; }
  version="$(sed -n 's/^version=//p' "$UPGRADE_FILE" 2>/dev/null || true)"
  started="$(sed -n 's/^started=//p' "$UPGRADE_FILE" 2>/dev/null || true)"
  [[ "$started" =~ ^[0-9]{1,12}$ ]] || started="$(date -u +%s)"
  deadline=$((started + UPGRADE_TIMEOUT))
  log "watchdog: waiting for version $version to heartbeat"
  while (($(date -u +%s) < deadline)); do
    if [[ -f "$UPGRADE_OK_FILE" ]]; then
      log "watchdog: version $version heartbeated; upgrade done"
      rm -f "$UPGRADE_FILE" "$UPGRADE_OK_FILE"
      return 0
    fi
    sleep 1
  done
  if [[ -f "$UPGRADE_OK_FILE" ]]; then
    log "watchdog: version $version heartbeated; upgrade done"
    rm -f "$UPGRADE_FILE" "$UPGRADE_OK_FILE"
    return 0
  fi
  log "watchdog: version $version did not heartbeat within ${UPGRADE_TIMEOUT}s; restoring the previous version"
  [[ -f "$PREVIOUS_FILE" ]] || { log "watchdog: no previous version to restore"; return 1; }
  # Copied in a private folder beside the agent, so the rename puts it in place in one step.
  private_dir "$LIB_DIR/.restore.XXXXXX" || { log "watchdog: restore failed"; return 1; }
  { cp -p "$PREVIOUS_FILE" "$REPLY/host-agent.sh" && mv -f "$REPLY/host-agent.sh" "$AGENT_FILE"; } || { log "watchdog: restore failed"; return 1; }
  rm -f "$UPGRADE_FILE" "$UPGRADE_OK_FILE"
  printf 'version=%s\nat=%s\n' "$version" "$(date -u +%s)" >"$UPGRADE_FAILED_FILE" || true
  if command -v systemctl >/dev/null 2>&1; then
    timeout 30 systemctl reset-failed "$AGENT_UNIT" >/dev/null 2>&1 || true
    timeout 30 systemctl restart "$AGENT_UNIT" >/dev/null 2>&1 || log "watchdog: could not restart $AGENT_UNIT"
  fi
  log "watchdog: previous version restored"
}

# ---------------------------------------------------------------------------------------------

if [[ "$MODE" == watchdog ]]; then
  run_watchdog
  exit $?
fi
if [[ "$MODE" == repin ]]; then
  run_repin
  exit $?
fi

load_state || exit 1
load_collectors
json_reader_present || { log "perl with JSON::PP not found: the agent reads JSON with it (every Proxmox VE node has both)"; exit 1; }
private_dir "${TMPDIR:-/tmp}/homefleet-agent.XXXXXX" || exit 1
WORK_DIR="$REPLY"
trap 'exit 0' TERM INT

if ((ONCE)); then
  if heartbeat; then
    wait
    exit 0
  fi
  exit 75
fi

log "version $HOMEFLEET_AGENT_VERSION started; reporting to $SERVER_URL"
# After a failed heartbeat the next try comes sooner (the minimum, doubling up to the interval), so
# a host is back soon after a controller restart without hammering one that stays down.
RETRY_DELAY=$INTERVAL_MIN
FIRST=1
while :; do
  if heartbeat; then
    DELAY=$INTERVAL
    RETRY_DELAY=$INTERVAL_MIN
  else
    DELAY=$((RETRY_DELAY < INTERVAL ? RETRY_DELAY : INTERVAL))
    RETRY_DELAY=$((RETRY_DELAY * 2 > INTERVAL_MAX ? INTERVAL_MAX : RETRY_DELAY * 2))
  fi
  # The command loop starts once the first heartbeat has listed the guests it may act on.
  if ((FIRST)); then
    FIRST=0
    command_loop 3>&- &
    POLL_PID=$!
  fi
  # In the background so that a stop signal is handled at once, not after the sleep.
  sleep "$DELAY" &
  SLEEP_PID=$!
  wait "$SLEEP_PID" || true
done
