# shellcheck shell=bash
# homefleet usage reporter: sourced by provisioning scripts, never executed.
#
#   source /path/to/usage-report.sh
#   post_to_api                       # container install starts
#   post_to_api_vm                    # virtual machine install starts
#   post_update_to_api done           # install finished (or: post_update_to_api failed "why")
#
# Reporting is fire-and-forget (part B: "any failure of the request is ignored by the script"):
# every function returns 0, prints nothing, never exits the caller (also under `set -euo pipefail`,
# `set -u` with every variable unset, and an ERR trap), and gives up after USAGE_API_TIMEOUT
# seconds. With USAGE_STRICT=yes a report that cannot be delivered says why on stderr and the
# function returns 1 instead. Variables read (all optional):
#
#   USAGE_API_BASE       base URL, e.g. https://homefleet.example/api/usage; empty: nothing is sent
#   USAGE_API_TIMEOUT    whole-request limit in seconds (default 5; connecting gets at most 3)
#   USAGE_CA_FILE        a CA or certificate file (PEM) the server's certificate is checked against,
#                        e.g. homefleet's own self-signed certificate
#   USAGE_PIN            sha256//<base64>: the SHA-256 of the server's public key; without
#                        USAGE_CA_FILE the pin alone is the check (as the host agent's --fingerprint)
#   USAGE_STRICT         `yes`: a report that cannot be delivered is an error (stderr, return 1)
#   USAGE_SETTINGS_FILE  VM diagnostics file (default /usr/local/homefleet/diagnostics), KEY=value lines
#   RANDOM_UUID          the install's random UUID, shared by the start report and the update
#   DIAGNOSTICS          `no` switches reporting off
#   CT_TYPE DISK_SIZE CORE_COUNT RAM_SIZE var_os var_version DISABLEIP6 NSAPP METHOD
#
# Variables written: POST_UPDATE_DONE (`true` once the update was sent: later updates do nothing),
# DIAGNOSTICS (post_to_api_vm sets it from the settings file, `no` when the file is absent, so the
# update follows the same choice). Every other name is local; helpers are prefixed `__usage_`, and
# json_string comes from lib/json-string.sh beside this file (shared with the host agent).

# Loads the JSON string helper from lib/ beside this file. Without it nothing is reported.
__usage_load() {
  local __dir=.
  if [[ "${BASH_SOURCE[0]}" == */* ]]; then __dir="${BASH_SOURCE[0]%/*}"; fi
  # shellcheck source=reporter/lib/json-string.sh
  source "$__dir/lib/json-string.sh"
}
__usage_load 2>/dev/null || true

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

# Without the JSON helper (lib/json-string.sh) nothing can be sent.
__usage_missing_helper() {
  __usage_failed "lib/json-string.sh was not found beside usage-report.sh; nothing was sent"
}

# A report that could not be delivered: ignored (part B), unless USAGE_STRICT=yes asks to hear of it.
__usage_failed() {
  if [[ "${USAGE_STRICT:-}" == yes ]]; then
    printf 'usage-report: %s\n' "$1" >&2
    return 1
  fi
  return 0
}

# POSTs the JSON $2 to $USAGE_API_BASE$1. The status code is captured; a failure is __usage_failed.
__usage_post() {
  local __timeout="${USAGE_API_TIMEOUT:-}" __connect __code __exit=0 __url="${USAGE_API_BASE%/}$1"
  local -a __tls=()
  case "$__timeout" in
    [1-9] | [1-9][0-9] | [1-9][0-9][0-9]) ;;
    *) __timeout=5 ;;
  esac
  __connect=3
  if ((__timeout < __connect)); then __connect="$__timeout"; fi
  if [[ -n "${USAGE_CA_FILE:-}" ]]; then
    if [[ ! -r "$USAGE_CA_FILE" ]]; then
      __usage_failed "USAGE_CA_FILE $USAGE_CA_FILE cannot be read; nothing was sent"
      return
    fi
    __tls+=(--cacert "$USAGE_CA_FILE")
  fi
  if [[ -n "${USAGE_PIN:-}" ]]; then
    # Globs, never =~: a regex match would overwrite the caller's BASH_REMATCH.
    if [[ "$USAGE_PIN" != sha256//* || ${#USAGE_PIN} -ne 52 || "${USAGE_PIN#sha256//}" == *[!A-Za-z0-9+/=]* ]]; then
      __usage_failed "USAGE_PIN must be sha256//<base64 of the SHA-256 of the server's public key>; nothing was sent"
      return
    fi
    __tls+=(--pinnedpubkey "$USAGE_PIN")
    # The pin is the check: -k only skips the CA check that a self-signed certificate cannot pass.
    if [[ -z "${USAGE_CA_FILE:-}" ]]; then __tls+=(-k); fi
  fi
  # --post301/--post302 keep POST and the body across redirects; -L alone would turn them into GET.
  __code="$(curl -sS -o /dev/null -w '%{http_code}' -L --post301 --post302 --max-redirs 3 \
    --connect-timeout "$__connect" --max-time "$__timeout" ${__tls[@]+"${__tls[@]}"} \
    -H 'Content-Type: application/json' --data-binary @- "$__url" <<<"$2" 2>/dev/null)" || __exit=$?
  case "$__code" in
    2[0-9][0-9]) return 0 ;;
    '' | 000)
      case "$__exit" in
        60 | 77) __usage_failed "$__url: the server's certificate is not trusted (set USAGE_CA_FILE to its certificate, or USAGE_PIN)" ;;
        90) __usage_failed "$__url: the server's public key does not match USAGE_PIN" ;;
        28) __usage_failed "$__url did not answer within ${__timeout}s" ;;
        *) __usage_failed "$__url did not answer (curl exit $__exit)" ;;
      esac
      ;;
    *) __usage_failed "$__url answered $__code" ;;
  esac
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
  if ! declare -F json_string >/dev/null; then __usage_missing_helper; return; fi
  local __kind="$1" __ct __disk __cores __ram __os __ver __ip6 __app __method __pve __id __json
  if [[ "$__kind" == vm ]]; then
    __ct=2
    local __size="${DISK_SIZE:-}"
    __usage_json_number "${__size%G}" __disk
    __ip6='""'
  else
    __usage_json_number "${CT_TYPE:-}" __ct
    __usage_json_number "${DISK_SIZE:-}" __disk
    json_string "${DISABLEIP6:-}" __ip6
  fi
  __usage_json_number "${CORE_COUNT:-}" __cores
  __usage_json_number "${RAM_SIZE:-}" __ram
  json_string "${var_os:-}" __os
  json_string "${var_version:-}" __ver
  json_string "${NSAPP:-}" __app
  json_string "${METHOD:-}" __method
  __usage_pve_version __pve
  json_string "$__pve" __pve
  json_string "${RANDOM_UUID:-}" __id
  __json="{\"ct_type\":$__ct,\"type\":\"$__kind\",\"disk_size\":$__disk,\"core_count\":$__cores,\"ram_size\":$__ram,"
  __json+="\"os_type\":$__os,\"os_version\":$__ver,\"disableip6\":$__ip6,\"nsapp\":$__app,\"method\":$__method,"
  __json+="\"pve_version\":$__pve,\"status\":\"installing\",\"random_id\":$__id}"
  __usage_post /upload "$__json"
}

# Start report of a container install.
post_to_api() {
  if __usage_enabled; then __usage_start_report lxc || return; fi
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
  if __usage_enabled; then __usage_start_report vm || return; fi
  return 0
}

# Status update: post_update_to_api [status] [error]; sent at most once per run. A long error
# text is cut to its first 1000 characters.
post_update_to_api() {
  local __status __text="${2:-No error message}" __error __id __json
  if [[ "${POST_UPDATE_DONE:-}" == true ]]; then return 0; fi
  if ! __usage_enabled; then return 0; fi
  if ! declare -F json_string >/dev/null; then __usage_missing_helper; return; fi
  # The first 1000 characters: well inside the server's 2000-character bound in any locale.
  json_string "${__text:0:1000}" __error
  json_string "${1:-failed}" __status
  json_string "${RANDOM_UUID:-}" __id
  __json="{\"status\":$__status,\"error\":$__error,\"random_id\":$__id}"
  POST_UPDATE_DONE=true
  __usage_post /upload/updatestatus "$__json" || return
  return 0
}
