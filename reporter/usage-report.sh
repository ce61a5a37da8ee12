# shellcheck shell=bash
# homefleet usage reporter: sourced by provisioning scripts, never executed.
#
#   source /path/to/usage-report.sh
#   post_to_api                       # container install starts
#   post_to_api_vm                    # virtual machine install starts
#   post_update_to_api done           # install finished (or: post_update_to_api failed "why")
#
# Reporting is fire-and-forget: every function returns 0, prints nothing, never exits the caller
# (also under `set -euo pipefail`, `set -u` with every variable unset, and an ERR trap), and gives
# up after USAGE_API_TIMEOUT seconds. Variables read (all optional):
#
#   USAGE_API_BASE       base URL, e.g. https://homefleet.example/api/usage; empty: nothing is sent
#   USAGE_API_TIMEOUT    whole-request limit in seconds (default 5; connecting gets at most 3)
#   USAGE_SETTINGS_FILE  VM diagnostics file (default /usr/local/homefleet/diagnostics), KEY=value lines
#   RANDOM_UUID          the install's random UUID, shared by the start report and the update
#   DIAGNOSTICS          `no` switches reporting off
#   CT_TYPE DISK_SIZE CORE_COUNT RAM_SIZE var_os var_version DISABLEIP6 NSAPP METHOD
#
# Variables written: POST_UPDATE_DONE (`true` once the update was sent: later updates do nothing),
# DIAGNOSTICS (post_to_api_vm sets it from the settings file, `no` when the file is absent, so the
# update follows the same choice). Every other name is local; helpers are prefixed `__usage_`.

# JSON string literal (with quotes) of $1 into the variable named by $2. Pure bash: control
# characters become escapes, everything else (UTF-8 included) is kept as it is.
__usage_json_string() {
  local __s="${1-}" __bs=$'\\' __q='"' __i __h __c __e
  __s="${__s//"$__bs"/"$__bs$__bs"}"
  __s="${__s//"$__q"/"$__bs$__q"}"
  __s="${__s//$'\n'/"${__bs}n"}"
  __s="${__s//$'\r'/"${__bs}r"}"
  __s="${__s//$'\t'/"${__bs}t"}"
  for ((__i = 1; __i < 32; __i++)); do
    printf -v __h '%02x' "$__i"
    printf -v __c '%b' "\\x$__h"
    if [[ "$__s" == *"$__c"* ]]; then
      printf -v __e '\\u%04x' "$__i"
      __s="${__s//"$__c"/"$__e"}"
    fi
  done
  printf -v "$2" '"%s"' "$__s"
}

# JSON number for $1 when it is a plain decimal number, otherwise null (never an unquoted string).
__usage_json_number() {
  local __n="${1-}"
  # Globs, never =~: a regex match would overwrite the caller's BASH_REMATCH.
  if [[ -n "$__n" && "$__n" != *[!0-9.]* && "$__n" != .* && "$__n" != *. && "$__n" != *.*.* ]]; then
    # Leading zeros are not valid JSON: 08 becomes 8, 007.5 becomes 7.5.
    while [[ "$__n" == 0[0-9]* ]]; do __n="${__n:1}"; done
    printf -v "$2" '%s' "$__n"
  else
    printf -v "$2" '%s' null
  fi
}

# True when a report may be sent: curl present, a base URL, diagnostics not `no`, a random id.
__usage_enabled() {
  command -v curl >/dev/null 2>&1 || return 1
  [[ -n "${USAGE_API_BASE:-}" ]] || return 1
  [[ "${DIAGNOSTICS:-}" != [Nn][Oo] ]] || return 1
  [[ -n "${RANDOM_UUID:-}" ]] || return 1
  return 0
}

# POSTs the JSON $2 to $USAGE_API_BASE$1. The status code is captured and ignored (part B).
__usage_post() {
  local __timeout="${USAGE_API_TIMEOUT:-}" __connect __code
  case "$__timeout" in
    [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) ;;
    *) __timeout=5 ;;
  esac
  __connect=3
  if ((__timeout < __connect)); then __connect="$__timeout"; fi
  # --post301/--post302 keep POST and the body across redirects; -L alone would turn them into GET.
  __code="$(curl -sS -o /dev/null -w '%{http_code}' -L --post301 --post302 --max-redirs 3 \
    --connect-timeout "$__connect" --max-time "$__timeout" \
    -H 'Content-Type: application/json' --data-binary @- "${USAGE_API_BASE%/}$1" <<<"$2" 2>/dev/null || true)"
  : "$__code"
  return 0
}

# The hypervisor's version: `pve-manager/8.2.4/faa8... (running kernel: ...)` gives 8.2.4.
__usage_pve_version() {
  local __out __first __v=''
  __out="$(pveversion 2>/dev/null || true)"
  __first="${__out%%[[:space:]]*}"
  if [[ "$__first" == */* ]]; then
    __v="${__first#*/}"
    __v="${__v%%/*}"
  fi
  if [[ -z "$__v" || "$__v" == *[!0-9A-Za-z.+~-]* ]]; then __v='not found'; fi
  printf -v "$1" '%s' "$__v"
}

# Builds and sends a start report; $1 is lxc or vm.
__usage_start_report() {
  local __kind="$1" __ct __disk __cores __ram __os __ver __ip6 __app __method __pve __id __json
  if [[ "$__kind" == vm ]]; then
    __ct=2
    local __size="${DISK_SIZE:-}"
    __usage_json_number "${__size%G}" __disk
    __ip6='""'
  else
    __usage_json_number "${CT_TYPE:-}" __ct
    __usage_json_number "${DISK_SIZE:-}" __disk
    __usage_json_string "${DISABLEIP6:-}" __ip6
  fi
  __usage_json_number "${CORE_COUNT:-}" __cores
  __usage_json_number "${RAM_SIZE:-}" __ram
  __usage_json_string "${var_os:-}" __os
  __usage_json_string "${var_version:-}" __ver
  __usage_json_string "${NSAPP:-}" __app
  __usage_json_string "${METHOD:-}" __method
  __usage_pve_version __pve
  __usage_json_string "$__pve" __pve
  __usage_json_string "${RANDOM_UUID:-}" __id
  __json="{\"ct_type\":$__ct,\"type\":\"$__kind\",\"disk_size\":$__disk,\"core_count\":$__cores,\"ram_size\":$__ram,"
  __json+="\"os_type\":$__os,\"os_version\":$__ver,\"disableip6\":$__ip6,\"nsapp\":$__app,\"method\":$__method,"
  __json+="\"pve_version\":$__pve,\"status\":\"installing\",\"random_id\":$__id}"
  __usage_post /upload "$__json"
}

# Start report of a container install.
post_to_api() {
  if __usage_enabled; then __usage_start_report lxc; fi
  return 0
}

# Start report of a virtual machine install. The diagnostics choice comes from the settings file,
# read line by line (never sourced); without the file nothing is sent.
post_to_api_vm() {
  local __file="${USAGE_SETTINGS_FILE:-/usr/local/homefleet/diagnostics}" __line __value=''
  if [[ ! -f "$__file" || ! -r "$__file" ]]; then
    DIAGNOSTICS=no
    return 0
  fi
  while IFS= read -r __line || [[ -n "$__line" ]]; do
    __line="${__line#"${__line%%[![:space:]]*}"}"
    case "$__line" in
      DIAGNOSTICS=* | DIAGNOSTICS[[:space:]]*=*) __value="${__line#*=}" ;;
    esac
  done <"$__file" 2>/dev/null || true
  __value="${__value#"${__value%%[![:space:]]*}"}"
  __value="${__value%"${__value##*[![:space:]]}"}"
  __value="${__value#[\"\']}"
  __value="${__value%[\"\']}"
  DIAGNOSTICS="$__value"
  if __usage_enabled; then __usage_start_report vm; fi
  return 0
}

# Status update: post_update_to_api [status] [error]; sent at most once per run. A long error
# text is cut to its first 1000 characters.
post_update_to_api() {
  local __status __text="${2:-No error message}" __error __id __json
  if [[ "${POST_UPDATE_DONE:-}" == true ]]; then return 0; fi
  if ! __usage_enabled; then return 0; fi
  # The first 1000 characters: well inside the server's 2000-character bound in any locale.
  __usage_json_string "${__text:0:1000}" __error
  __usage_json_string "${1:-failed}" __status
  __usage_json_string "${RANDOM_UUID:-}" __id
  __json="{\"status\":$__status,\"error\":$__error,\"random_id\":$__id}"
  POST_UPDATE_DONE=true
  __usage_post /upload/updatestatus "$__json"
  return 0
}
