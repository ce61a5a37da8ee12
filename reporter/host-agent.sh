#!/usr/bin/env bash
# homefleet host agent: reports this hypervisor host to homefleet and runs the commands it answers.
#
#   host-agent.sh [--once] [--root DIR]     heartbeat loop (--once: one cycle, then exit)
#   host-agent.sh --watchdog [--root DIR]   upgrade watchdog (started by the agent, see below)
#   host-agent.sh --repin SHA256 [--root DIR]  pin the controller's new certificate key (as root)
#   host-agent.sh --version
#
# Installed by install-agent.sh as a systemd service. Needs bash, curl, coreutils and openssl, plus
# the hypervisor's own qm/pct/pveversion; nothing is compiled and no JSON tool is used.
#
# State (written by the installer, kept across upgrades), <root>/etc/homefleet-agent/, mode 0600:
#   server_url               the controller's base URL
#   host_token               this host's hfh_ token (never logged, never on a command line)
#   manifest_public_key.pem  the controller's Ed25519 key, pinned at enrollment
#   tls_pin                  optional: sha256//<base64 SHA-256 of the certificate's public key>
#   manifest_issued_at       the newest issued_at of a verified manifest (seconds): older ones are replays
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
# Guest control: beside the heartbeat timer a second loop long-polls GET /api/agent/commands?wait=25
# (homefleet never connects to a host). A {"type":"guest.action"} command runs qm or pct (as the
# guest's own type says) with one fixed verb and an argument list this script builds itself from
# fields that must match strict patterns, only for a vmid its own last heartbeat listed, under the
# verb's time limit; nothing from the server passes through a shell or eval. {"type":"logs"} sends
# the last 200 lines of this agent's journal. Each result goes to
# POST /api/agent/operations/<id>/result (retried). Guest configs (qm/pct config, redacted: the value
# of cipassword and of any key holding password, secret or token becomes **REDACTED**) are hashed
# into the heartbeat and uploaded to POST /api/agent/guest-configs when their hash changes.
#
# A server that is down, slow or answers garbage is logged and retried at the next interval: every
# curl is bounded by --connect-timeout and --max-time, and the loop never exits on such errors.
#
# Variables for tests (the systemd unit sets none): HOMEFLEET_INTERVAL_MIN_S (10),
# HOMEFLEET_CURL_MAX_TIME (20), HOMEFLEET_CONNECT_TIMEOUT (5), HOMEFLEET_UPGRADE_TIMEOUT_S (300),
# HOMEFLEET_RECEIPT_DEADLINE_S (604800: the receipt token's lifetime), HOMEFLEET_RECEIPT_MAX_DELAY_S (600),
# HOMEFLEET_POLL_WAIT_S (25: the command poll's wait), HOMEFLEET_RESULT_TRIES (8).

HOMEFLEET_AGENT_VERSION="1.0.0"

set -euo pipefail
umask 077

readonly AGENT_UNIT=homefleet-agent.service
readonly WATCHDOG_UNIT=homefleet-agent-watchdog.service
readonly INTERVAL_DEFAULT=30 INTERVAL_MAX=3600
readonly MAX_ANSWER_BYTES=1048576 MAX_AGENT_BYTES=4194304

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
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "homefleet-agent: unknown argument: $1" >&2; exit 2 ;;
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
POLL_PID=''
# Stops the command loop and the long poll it waits on: that curl would otherwise go on writing
# into the work folder while it is removed.
stop_command_loop() {
  [[ -n "$POLL_PID" ]] || return 0
  kill "$POLL_PID" 2>/dev/null || true
  if command -v pkill >/dev/null 2>&1; then pkill -TERM -P "$POLL_PID" -x curl 2>/dev/null || true; fi
  POLL_PID=''
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
# JSON without jq: strings are escaped here; answers are read only for a few flat fields, and
# every value taken from them is checked against a strict pattern before it is used.

# JSON string literal (with quotes) of $1 into the variable named by $2.
json_string() {
  # Prefixed locals: the caller's variable named by $2 must not be shadowed by one of ours.
  local __js_s="${1-}" __js_bs=$'\\' __js_q='"' __js_i __js_h __js_c __js_e
  __js_s="${__js_s//"$__js_bs"/"$__js_bs$__js_bs"}"
  __js_s="${__js_s//"$__js_q"/"$__js_bs$__js_q"}"
  __js_s="${__js_s//$'\n'/"${__js_bs}n"}"
  __js_s="${__js_s//$'\r'/"${__js_bs}r"}"
  __js_s="${__js_s//$'\t'/"${__js_bs}t"}"
  for ((__js_i = 1; __js_i < 32; __js_i++)); do
    printf -v __js_h '%02x' "$__js_i"
    printf -v __js_c '%b' "\\x$__js_h"
    if [[ "$__js_s" == *"$__js_c"* ]]; then
      printf -v __js_e '\\u%04x' "$__js_i"
      __js_s="${__js_s//"$__js_c"/"$__js_e"}"
    fi
  done
  printf -v "$2" '%s' "\"$__js_s\""
}

# The raw (still escaped) string value of key $2 in the JSON text $1, into REPLY; 1 when absent.
json_get_string() {
  local re="\"$2\"[[:space:]]*:[[:space:]]*\"(([^\"\\\\]|\\\\.)*)\""
  [[ "$1" =~ $re ]] || return 1
  REPLY="${BASH_REMATCH[1]}"
}

# The whole-number value of key $2 in $1, into REPLY; 1 when absent or not a plain number.
json_get_int() {
  local re="\"$2\"[[:space:]]*:[[:space:]]*([0-9]{1,15})([^0-9.eE]|$)"
  [[ "$1" =~ $re ]] || return 1
  REPLY="${BASH_REMATCH[1]}"
}

# The flat objects ({...} holding no other object) in $1, in order, into the array OBJECTS.
json_objects() {
  local rest="$1" re='\{[^{}]*\}'
  OBJECTS=()
  while [[ "$rest" =~ $re ]]; do
    OBJECTS+=("${BASH_REMATCH[0]}")
    rest="${rest#*"${BASH_REMATCH[0]}"}"
  done
}

# The flat objects that follow key $2 in $1, into the array OBJECTS.
json_objects_after() {
  local key="\"$2\""
  OBJECTS=()
  [[ "$1" == *"$key"* ]] || return 0
  json_objects "${1#*"$key"}"
}

is_version() { [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ && ${#1} -le 64 ]]; }

# 0 when version $1 is older than $2: x.y.z compared as numbers, a pre-release before its release
# (as the controller compares them).
version_lt() {
  local a="$1" b="$2" i x y pa pb
  local -a na nb
  IFS=. read -r -a na <<<"${a%%[-+]*}"
  IFS=. read -r -a nb <<<"${b%%[-+]*}"
  for ((i = 0; i < 3; i++)); do
    x=$((10#${na[i]:-0}))
    y=$((10#${nb[i]:-0}))
    if ((x != y)); then ((x < y)); return; fi
  done
  if [[ "$a" != *-* ]]; then return 1; fi
  if [[ "$b" != *-* ]]; then return 0; fi
  pa="${a#*[-+]}"
  pb="${b#*[-+]}"
  [[ "${pa%%[-+]*}" < "${pb%%[-+]*}" ]]
}

# ---------------------------------------------------------------------------------------------
# HTTP

SERVER_URL=''
HOST_TOKEN=''
ENTRY=''
OBJECTS=()
TLS_PIN=''
HTTP_CODE=''
CURL_EXIT=0

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

# http METHOD PATH OUTFILE [BODYFILE] [TOKEN]: sets HTTP_CODE ('' when nothing came back).
# The token goes to curl through its config on stdin, never on the command line (where any local
# user could read it from /proc). With a pin, the certificate's public key must match it: -k only
# skips the CA check that a self-signed certificate cannot pass.
http() {
  local method="$1" url="$SERVER_URL$2" out="$3" body="${4:-}" token="${5:-}" config='' code
  local -a args=(-sS -o "$out" -w '%{http_code}' -X "$method" --proto '=http,https'
    --connect-timeout "$CONNECT_TIMEOUT" --max-time "${HTTP_MAX_TIME:-$CURL_MAX_TIME}" --max-filesize "$MAX_AGENT_BYTES")
  if [[ -n "$TLS_PIN" ]]; then args+=(-k --pinnedpubkey "$TLS_PIN"); fi
  if [[ -n "$body" ]]; then args+=(-H 'Content-Type: application/json' --data-binary "@$body"); fi
  if [[ -n "$token" ]]; then config="header = \"Authorization: Bearer $token\""; fi
  HTTP_CODE=''
  CURL_EXIT=0
  code="$(curl "${args[@]}" -K - "$url" <<<"$config" 2>/dev/null)" || CURL_EXIT=$?
  [[ "$code" =~ ^[0-9]{3}$ && "$code" != 000 ]] || return 1
  HTTP_CODE="$code"
}

http_ok() { http "$@" && [[ "$HTTP_CODE" == 200 ]]; }

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

# Guests from `qm list` and `pct list`. Proxmox guest names are DNS names (no spaces), so fields
# split on whitespace; pct's Lock column may be empty, so its Name is the field that starts at or
# after the header's Name column.
GUESTS_JSON=''
GUESTS_LIST=''
add_guest() {
  local vmid="$1" name="$2" type="$3" status="$4" n s config=''
  [[ "$vmid" =~ ^[1-9][0-9]{0,14}$ ]] || return 0
  [[ "$status" =~ ^[A-Za-z0-9_-]{1,32}$ ]] || status=''
  json_string "${name:0:200}" n
  json_string "$status" s
  if guest_config "$vmid" "$type"; then config=",\"config_sha256\":\"$REPLY\""; fi
  GUESTS_JSON+="${GUESTS_JSON:+,}{\"vmid\":$vmid,\"name\":$n,\"type\":\"$type\",\"status\":$s$config${GUEST_METRICS[$vmid]-}}"
  GUESTS_LIST+="$vmid $type"$'\n'
}

# "the value of cipassword and of any key containing password, secret or token becomes
# **REDACTED**" (the controller refuses a config that still holds one).
redact_config() {
  local line key lower re='^([A-Za-z0-9_.-]*)([[:space:]]*[:=][[:space:]]*)(.*)$'
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" =~ $re ]]; then
      key="${BASH_REMATCH[1]}"
      lower="${key,,}"
      if [[ -n "${BASH_REMATCH[3]}" && ("$lower" == *password* || "$lower" == *secret* || "$lower" == *token*) ]]; then
        line="$key${BASH_REMATCH[2]}**REDACTED**"
      fi
    fi
    printf '%s\n' "$line"
  done
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

collect_guests() {
  local out line name_col=-1 rest lead
  local -a f
  GUESTS_JSON=''
  GUESTS_LIST=''
  if command -v qm >/dev/null 2>&1; then
    out="$(timeout 30 qm list 2>/dev/null || true)"
    while IFS= read -r line; do
      read -r -a f <<<"$line" || true
      ((${#f[@]} >= 3)) || continue
      add_guest "${f[0]}" "${f[1]}" qemu "${f[2]}"
    done <<<"$out"
  fi
  if command -v pct >/dev/null 2>&1; then
    out="$(timeout 30 pct list 2>/dev/null || true)"
    while IFS= read -r line; do
      read -r -a f <<<"$line" || true
      ((${#f[@]} >= 2)) || continue
      if [[ "${f[0]}" == VMID ]]; then
        rest="${line%%Name*}"
        if [[ "$rest" != "$line" ]]; then name_col=${#rest}; fi
        continue
      fi
      if ((${#f[@]} >= 4)); then
        add_guest "${f[0]}" "${f[3]}" lxc "${f[1]}"
      elif ((${#f[@]} == 3)); then
        # Third field: the name, unless it sits in the Lock column (a locked guest with no name).
        rest="${line%"${f[2]}"*}"
        lead=${#rest}
        if ((name_col < 0 || lead >= name_col)); then
          add_guest "${f[0]}" "${f[2]}" lxc "${f[1]}"
        else
          add_guest "${f[0]}" '' lxc "${f[1]}"
        fi
      else
        add_guest "${f[0]}" '' lxc "${f[1]}"
      fi
    done <<<"$out"
  fi
  # What the command loop may act on: "vmid must be an integer that the agent listed in its own last heartbeat".
  printf '%s' "$GUESTS_LIST" >"$WORK_DIR/guests.tmp" && mv -f "$WORK_DIR/guests.tmp" "$WORK_DIR/guests"
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

# Per guest, `,"cpu":…,"mem":…` from `pvesh get /nodes/$1/qemu|lxc --output-format json` ($1: this
# host's name, the Proxmox node), by vmid.
declare -A GUEST_METRICS=()
collect_guest_metrics() {
  local node="$1" type out object field value fields re
  GUEST_METRICS=()
  command -v pvesh >/dev/null 2>&1 || return 0
  [[ "$node" =~ ^[A-Za-z0-9._-]{1,253}$ ]] || return 0
  for type in qemu lxc; do
    out="$(timeout 30 pvesh get "/nodes/$node/$type" --output-format json 2>/dev/null || true)"
    # Each guest is a flat object: {"vmid":100,"cpu":0.02,...}.
    json_objects "$out"
    for object in ${OBJECTS[@]+"${OBJECTS[@]}"}; do
      json_get_int "$object" vmid || continue
      [[ "$REPLY" =~ ^[1-9][0-9]{0,14}$ ]] || continue
      local vmid="$REPLY"
      fields=''
      for field in cpu mem maxmem disk maxdisk uptime netin netout; do
        re="\"$field\"[[:space:]]*:[[:space:]]*([0-9.eE+-]{1,40})"
        [[ "$object" =~ $re ]] || continue
        value="${BASH_REMATCH[1]}"
        is_number "$value" || continue
        # cpu is a share of the guest's cores; Proxmox can report a little over 1 while it settles.
        if [[ "$field" == cpu ]] && at_least_one "$value"; then value=1; fi
        [[ "$field" == uptime ]] && field=uptime_s
        fields+=",\"$field\":$value"
      done
      GUEST_METRICS[$vmid]="$fields"
    done
  done
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
  collect_guest_metrics "$name"
  collect_guests
  host_metrics_field
  json="{\"agent_version\":$version,\"started_at\":$started,\"hostname\":$host,"
  json+="\"addresses\":$(addresses_json),$(uptime_field)"
  json_string "$(hypervisor_version)" version
  json+="\"hypervisor_version\":$version,$METRICS_FIELD\"guests\":[$GUESTS_JSON]}"
  printf '%s' "$json"
}

# One heartbeat and the commands of its answer. 0 when the server took it, 1 otherwise.
heartbeat() {
  local body="$WORK_DIR/heartbeat.json" answer="$WORK_DIR/answer.json" text='' object type
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
  if [[ -f "$answer" ]] && (($(stat -c %s "$answer") <= MAX_ANSWER_BYTES)); then text="$(<"$answer")"; fi
  text="${text#"${text%%[![:space:]]*}"}"
  if [[ "$text" != \{* ]]; then
    log "heartbeat: the answer is not a JSON object; ignored"
    return 1
  fi
  if json_get_int "$text" heartbeat_interval_s; then
    INTERVAL="$(bounded_int "$REPLY" "$INTERVAL_MIN" "$INTERVAL_MAX" "$INTERVAL_DEFAULT")"
  fi
  # The new version of an upgrade reached the server: the watchdog can stand down.
  if [[ -f "$UPGRADE_FILE" ]] && [[ "$(sed -n 's/^version=//p' "$UPGRADE_FILE" 2>/dev/null || true)" == "$HOMEFLEET_AGENT_VERSION" ]]; then
    : >"$UPGRADE_OK_FILE" || true
  fi
  upload_configs
  json_objects_after "$text" commands
  for object in "${OBJECTS[@]}"; do
    json_get_string "$object" type || continue
    type="$REPLY"
    case "$type" in
      uninstall) run_uninstall "$object" ;;
      upgrade) run_upgrade "$object" || true ;;
      # The command poll's fallback: run beside the heartbeats, which a clone must not hold up.
      guest.action | logs) run_command "$object" & ;;
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

# Builds the argument list of a guest action from the command $1 into ARGV (tool first) and its time
# limit into LIMIT; 1 with the reason in REPLY when it is refused.
ARGV=()
LIMIT=0
guest_argv() {
  local object="$1" vmid action type tool name new_vmid
  ARGV=()
  { json_get_string "$object" action && [[ -n "${VERB_LIMIT[$REPLY]:-}" ]]; } || { REPLY='unknown action'; return 1; }
  action="$REPLY"
  { json_get_int "$object" vmid && [[ "$REPLY" =~ ^[1-9][0-9]{0,14}$ ]]; } || { REPLY='invalid vmid'; return 1; }
  vmid="$REPLY"
  listed_guest "$vmid" || { REPLY="guest $vmid is not one this host listed"; return 1; }
  type="$REPLY"
  tool=qm
  [[ "$type" == lxc ]] && tool=pct
  # The guest's type is the one this host listed, whatever the command says.
  if json_get_string "$object" guest_type && [[ "$REPLY" != "$type" ]]; then REPLY="guest $vmid is $type, not $REPLY"; return 1; fi
  ARGV=("$tool" "$action" "$vmid")
  case "$action" in
    snapshot)
      { json_get_string "$object" name && [[ "$REPLY" =~ $SNAPSHOT_RE ]]; } || { REPLY='invalid snapshot name'; return 1; }
      ARGV+=("$REPLY")
      ;;
    rollback)
      { json_get_string "$object" snapshot && [[ "$REPLY" =~ $SNAPSHOT_RE ]]; } || { REPLY='invalid snapshot name'; return 1; }
      ARGV+=("$REPLY")
      ;;
    clone)
      { json_get_int "$object" new_vmid && [[ "$REPLY" =~ ^[1-9][0-9]{2,8}$ ]]; } || { REPLY='invalid new_vmid'; return 1; }
      new_vmid="$REPLY"
      ! listed_guest "$new_vmid" || { REPLY="guest $new_vmid already exists"; return 1; }
      { json_get_string "$object" name && [[ "$REPLY" =~ $GUEST_NAME_RE ]]; } || { REPLY='invalid guest name'; return 1; }
      name="$REPLY"
      ARGV+=("$new_vmid")
      if [[ "$tool" == qm ]]; then ARGV+=(--name "$name"); else ARGV+=(--hostname "$name"); fi
      if [[ "$object" =~ \"full\"[[:space:]]*:[[:space:]]*true ]]; then ARGV+=(--full 1); fi
      ;;
  esac
  LIMIT="${VERB_LIMIT[$action]}"
}

# Runs one command ({"type":"guest.action"|"logs", "operation_id", ...}) and reports its result.
run_command() {
  local object="$1" operation code=0 dir out
  { json_get_string "$object" operation_id && [[ "$REPLY" =~ ^[A-Za-z0-9_-]{1,128}$ ]]; } || { log "command: invalid operation_id; ignored"; return 0; }
  operation="$REPLY"
  private_dir "$WORK_DIR/op.XXXXXX" || return 0
  dir="$REPLY"
  out="$dir/output"
  json_get_string "$object" type || true
  case "$REPLY" in
    logs)
      timeout 30 journalctl -u "$AGENT_UNIT" -n 200 --no-pager -o short-iso >"$out" 2>&1 || code=$?
      ;;
    guest.action)
      if guest_argv "$object"; then
        log "operation $operation: ${ARGV[*]}"
        timeout --kill-after=15 "$LIMIT" "${ARGV[@]}" </dev/null >"$out" 2>&1 || code=$?
        if ((code == 124)); then printf '\nhomefleet-agent: %s did not finish within %ss\n' "${ARGV[1]}" "$LIMIT" >>"$out"; fi
      else
        log "operation $operation refused: $REPLY"
        printf 'refused by the agent: %s\n' "$REPLY" >"$out"
        code=$REFUSED
      fi
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
  # The server keeps the last 4 KiB; a log answer's 200 lines are sent whole (up to 64 KiB).
  # The x keeps a trailing newline that $(...) would drop.
  output="$(tail -c 65536 "$3" 2>/dev/null || true; printf x)"
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
command_loop() {
  local answer="$WORK_DIR/commands.json" text object delay=$INTERVAL_MIN
  trap - EXIT
  while :; do
    rm -f "$answer"
    text=''
    if HTTP_MAX_TIME=$((POLL_WAIT + CURL_MAX_TIME)) http GET "/api/agent/commands?wait=$POLL_WAIT" "$answer" '' "$HOST_TOKEN"; then
      case "$HTTP_CODE" in
        200)
          delay=$INTERVAL_MIN
          if [[ -f "$answer" ]] && (($(stat -c %s "$answer") <= MAX_ANSWER_BYTES)); then text="$(<"$answer")"; fi
          json_objects_after "$text" commands
          for object in "${OBJECTS[@]}"; do run_command "$object" & done
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

run_uninstall() {
  local object="$1" operation receipt delay=1 deadline out body
  json_get_string "$object" operation_id || { log "uninstall: no operation_id; ignored"; return 0; }
  operation="$REPLY"
  json_get_string "$object" receipt_token || { log "uninstall: no receipt_token; ignored"; return 0; }
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
# expiry and that it was not issued before the newest manifest seen. 0 when it can be trusted.
fetch_verified_manifest() {
  local dir="$1" key="$STATE_DIR/manifest_public_key.pem" expires now issued seen text
  [[ -r "$key" ]] || { log "upgrade: no pinned manifest key"; return 1; }
  http_ok GET /api/agent/releases/manifest.json "$dir/manifest.json" ||
    { log "upgrade: could not download the manifest (${HTTP_CODE:-no answer})"; return 1; }
  http_ok GET /api/agent/releases/manifest.json.sig "$dir/manifest.sig" ||
    { log "upgrade: could not download the manifest signature (${HTTP_CODE:-no answer})"; return 1; }
  base64 -d <"$dir/manifest.sig" >"$dir/manifest.sig.bin" 2>/dev/null || { log "upgrade: the signature is not base64"; return 1; }
  if ! openssl pkeyutl -verify -pubin -inkey "$key" -rawin -in "$dir/manifest.json" -sigfile "$dir/manifest.sig.bin" >/dev/null 2>&1; then
    log "upgrade: the manifest signature does not verify with the pinned key; refused"
    return 1
  fi
  text="$(<"$dir/manifest.json")"
  # A replayed old manifest is signed too: its expiry stops it once it has expired, and until then
  # the newest issued_at seen does (a replay could otherwise offer an older, vulnerable agent).
  if json_get_string "$text" expires_at; then
    expires="$(date -u -d "$REPLY" +%s 2>/dev/null || echo 0)"
    now="$(date -u +%s)"
    if ((expires <= now)); then log "upgrade: the manifest has expired; refused"; return 1; fi
  fi
  { json_get_string "$text" issued_at && issued="$(date -u -d "$REPLY" +%s 2>/dev/null)" && [[ "$issued" =~ ^[0-9]{1,12}$ ]]; } ||
    { log "upgrade: the manifest has no valid issued_at; refused"; return 1; }
  seen="$(read_state_file manifest_issued_at 2>/dev/null)" || seen=0
  [[ "$seen" =~ ^[0-9]{1,12}$ ]] || seen=0
  if ((issued < seen)); then
    log "upgrade: the manifest was issued at $REPLY, before the newest one this host has seen: a replayed older manifest; refused"
    return 1
  fi
  if ((issued > seen)); then printf '%s\n' "$issued" >"$ISSUED_FILE" || true; fi
}

# Sets ENTRY to the manifest's object for version $2 (manifest text in $1).
manifest_entry() {
  local object
  ENTRY=''
  json_objects_after "$1" agents
  for object in "${OBJECTS[@]}"; do
    if json_get_string "$object" version && [[ "$REPLY" == "$2" ]]; then
      ENTRY="$object"
      return 0
    fi
  done
  return 1
}

# Downloads the file of version $2 named by the manifest entry $3 into $1/agent and checks it.
fetch_verified_agent() {
  local dir="$1" version="$2" entry="$3" url sha size actual
  # upgradable_from: the oldest version that may upgrade to this one directly.
  if json_get_string "$entry" upgradable_from && is_version "$REPLY" &&
    [[ "$(printf '%s\n%s\n' "$REPLY" "$HOMEFLEET_AGENT_VERSION" | sort -V | head -n1)" != "$REPLY" ]]; then
    log "upgrade: version $version needs at least $REPLY to upgrade from; this is $HOMEFLEET_AGENT_VERSION"
    return 1
  fi
  { json_get_string "$entry" sha256 && [[ "$REPLY" =~ ^[0-9a-f]{64}$ ]]; } || { log "upgrade: the manifest has no sha256 for $version"; return 1; }
  sha="$REPLY"
  json_get_int "$entry" size || { log "upgrade: the manifest has no size for $version"; return 1; }
  size="$REPLY"
  # The manifest's url when it is on this server, otherwise the fixed release path.
  url="/api/agent/releases/$version/host-agent.sh"
  if json_get_string "$entry" url; then
    if [[ "$REPLY" =~ ^/[A-Za-z0-9._/+-]+$ ]]; then
      url="$REPLY"
    elif [[ "$REPLY" == "$SERVER_URL"/* && "${REPLY#"$SERVER_URL"}" =~ ^/[A-Za-z0-9._/+-]+$ ]]; then
      url="${REPLY#"$SERVER_URL"}"
    fi
  fi
  http_ok GET "$url" "$dir/agent" || { log "upgrade: could not download version $version (${HTTP_CODE:-no answer})"; return 1; }
  actual="$(stat -c %s "$dir/agent")"
  [[ "$actual" == "$size" ]] || { log "upgrade: version $version has $actual bytes, the manifest says $size; refused"; return 1; }
  actual="$(sha256sum "$dir/agent")"
  actual="${actual%% *}"
  [[ "$actual" == "$sha" ]] || { log "upgrade: SHA-256 of version $version does not match the manifest; refused"; return 1; }
  grep -q "^HOMEFLEET_AGENT_VERSION=\"$version\"\$" "$dir/agent" || { log "upgrade: the file does not declare version $version; refused"; return 1; }
  bash -n "$dir/agent" 2>/dev/null || { log "upgrade: version $version is not valid bash; refused"; return 1; }
}

start_watchdog() {
  command -v systemctl >/dev/null 2>&1 || return 1
  [[ -f "$UNIT_DIR/$WATCHDOG_UNIT" ]] || return 1
  timeout 30 systemctl reset-failed "$WATCHDOG_UNIT" >/dev/null 2>&1 || true
  timeout 30 systemctl start --no-block "$WATCHDOG_UNIT" >/dev/null 2>&1
}

run_upgrade() {
  local object="$1" version dir
  ENTRY=''
  { json_get_string "$object" version && is_version "$REPLY"; } || { log "upgrade: invalid version; ignored"; return 1; }
  version="$REPLY"
  [[ "$version" != "$HOMEFLEET_AGENT_VERSION" ]] || return 0
  # A downgrade only when an administrator asked for it by name: the command says rollback.
  if version_lt "$version" "$HOMEFLEET_AGENT_VERSION" && ! [[ "$object" =~ \"rollback\"[[:space:]]*:[[:space:]]*true ]]; then
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
  if ! fetch_verified_manifest "$dir" || ! manifest_entry "$(<"$dir/manifest.json")" "$version" ||
    ! fetch_verified_agent "$dir" "$version" "$ENTRY"; then
    [[ -n "$ENTRY" ]] || log "upgrade: version $version is not in the verified manifest"
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

# The pin curl takes (sha256//<base64>) from $1 given as sha256//<base64>, <base64> or 64 hex digits.
normalize_pin() {
  local fp="${1#sha256//}" hex escaped='' i
  fp="${fp#SHA256:}"
  if [[ "$fp" =~ ^[A-Za-z0-9+/]{43}=$ ]]; then
    REPLY="sha256//$fp"
  elif hex="${fp//:/}" && [[ "$hex" =~ ^[0-9A-Fa-f]{64}$ ]]; then
    for ((i = 0; i < 64; i += 2)); do escaped+="\\x${hex:i:2}"; done
    REPLY="sha256//$(printf '%b' "$escaped" | base64 -w0)"
  else
    return 1
  fi
}

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
