#!/usr/bin/env bash
# homefleet host agent installer (served by homefleet at /install/agent.sh).
#
#   curl -fsSL https://<homefleet>/install/agent.sh | sudo bash -s -- --token hfe_...
#
#   install-agent.sh [--server URL] --token hfe_... [--fingerprint SHA256] [--root DIR]
#   install-agent.sh --uninstall [--root DIR]
#
#   --server URL         the controller (the served installer defaults to the address it came from)
#   --token hfe_...      an enrollment token from the dashboard ("Add a host")
#   --fingerprint PIN    the controller's self-signed certificate, pinned instead of CA checks:
#                        the SHA-256 of the certificate's public key (SPKI), base64, as the dashboard
#                        prints it (sha256//<base64> or <base64>; 64 hex digits of the same hash work)
#   --root DIR           install under DIR instead of / (tests; systemctl is the one on PATH)
#   --uninstall          stop the agent and remove everything this installer put on the machine
#
# What it does: downloads the release manifest, its signature and the newest agent it names;
# enrolls with the token (POST /api/agent/enroll), which gives the host token and the controller's
# manifest key; verifies the manifest's Ed25519 signature with that key and the agent's SHA-256 and
# size; then installs:
#   <root>/usr/local/lib/homefleet-agent/host-agent.sh
#   <root>/etc/homefleet-agent/  (0700; server_url, host_token, manifest_public_key.pem, tls_pin,
#                                manifest_issued_at: 0600)
#   <root>/etc/systemd/system/homefleet-agent.service, homefleet-agent-watchdog.service
# and runs `systemctl daemon-reload` and `systemctl enable --now homefleet-agent.service`.
# Run again where the agent is installed, it refuses a manifest issued before the newest one that
# host has seen (a replay) and an agent older than the installed one (uninstall first for that).

# Replaced by the controller when it serves this file.
HOMEFLEET_SERVER_DEFAULT=""

set -euo pipefail

readonly AGENT_UNIT=homefleet-agent.service
readonly WATCHDOG_UNIT=homefleet-agent-watchdog.service
readonly MAX_BYTES=4194304

fail() {
  printf 'homefleet install: %s\n' "$*" >&2
  exit 1
}
say() { printf 'homefleet install: %s\n' "$*" >&2; }

SERVER="$HOMEFLEET_SERVER_DEFAULT"
TOKEN=''
FINGERPRINT=''
ROOT=/
UNINSTALL=0
while (($# > 0)); do
  case "$1" in
    --server | --token | --fingerprint | --root)
      [[ $# -ge 2 ]] || fail "$1 needs a value"
      case "$1" in
        --server) SERVER="$2" ;;
        --token) TOKEN="$2" ;;
        --fingerprint) FINGERPRINT="$2" ;;
        --root) ROOT="$2" ;;
      esac
      shift
      ;;
    --uninstall) UNINSTALL=1 ;;
    -h | --help) sed -n '2,19p' "${BASH_SOURCE[0]}" 2>/dev/null | sed 's/^# \{0,1\}//' || true; exit 0 ;;
    *) fail "unknown argument: $1 (see --help)" ;;
  esac
  shift
done

[[ -n "$ROOT" && "$ROOT" != *[[:space:]]* ]] || fail "--root must be a folder without spaces"
PREFIX="${ROOT%/}"
STATE_DIR="$PREFIX/etc/homefleet-agent"
LIB_DIR="$PREFIX/usr/local/lib/homefleet-agent"
UNIT_DIR="$PREFIX/etc/systemd/system"
AGENT_FILE="$LIB_DIR/host-agent.sh"

if [[ "$ROOT" == / && "$(id -u)" != 0 ]]; then fail "run as root (sudo)"; fi
command -v systemctl >/dev/null 2>&1 || fail "systemctl not found: the agent runs as a systemd service"

# stdin closed: under `curl ... | bash -s` the rest of this script is on stdin.
systemctl_quiet() { timeout 60 systemctl "$@" </dev/null >/dev/null 2>&1; }

# --- uninstall --------------------------------------------------------------------------------

if ((UNINSTALL)); then
  systemctl_quiet disable --now "$AGENT_UNIT" || true
  systemctl_quiet stop "$WATCHDOG_UNIT" || true
  rm -f "$UNIT_DIR/$AGENT_UNIT" "$UNIT_DIR/$WATCHDOG_UNIT"
  rm -rf "$LIB_DIR" "$STATE_DIR"
  systemctl_quiet daemon-reload || true
  say "removed the homefleet agent, its units and its state"
  say "the controller still lists this host: delete it there (force, as the agent can no longer confirm)"
  exit 0
fi

# --- checks -----------------------------------------------------------------------------------

for tool in curl openssl sha256sum base64 timeout; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found"
done
[[ -n "$TOKEN" ]] || fail "--token hfe_... is required (create one under Hosts > Add a host)"
[[ "$TOKEN" =~ ^hfe_[A-Za-z0-9_-]{20,200}$ ]] || fail "--token must be an enrollment token (hfe_...)"
SERVER="${SERVER%/}"
[[ -n "$SERVER" ]] || fail "--server URL is required"
url_re='^https?://[][A-Za-z0-9._~:@-]+(/[A-Za-z0-9._~/-]*)?$'
[[ "$SERVER" =~ $url_re ]] || fail "--server must be an http(s) URL"

# The pin curl takes: sha256//<base64 of the SHA-256 of the certificate's public key>.
TLS_PIN=''
if [[ -n "$FINGERPRINT" ]]; then
  fp="${FINGERPRINT#sha256//}"
  fp="${fp#SHA256:}"
  if [[ "$fp" =~ ^[A-Za-z0-9+/]{43}=$ ]]; then
    TLS_PIN="sha256//$fp"
  elif hex="${fp//:/}" && [[ "$hex" =~ ^[0-9A-Fa-f]{64}$ ]]; then
    escaped=''
    for ((i = 0; i < 64; i += 2)); do escaped+="\\x${hex:i:2}"; done
    TLS_PIN="sha256//$(printf '%b' "$escaped" | base64 -w0)"
  else
    fail "--fingerprint must be the SHA-256 of the certificate's public key, base64 (as the dashboard shows it)"
  fi
fi

MACHINE_ID=''
if [[ -r "$PREFIX/etc/machine-id" ]]; then IFS= read -r MACHINE_ID <"$PREFIX/etc/machine-id" || true; fi
[[ "$MACHINE_ID" =~ ^[A-Za-z0-9._:-]{1,128}$ ]] || fail "no machine id in $PREFIX/etc/machine-id"
HOSTNAME_VALUE=''
if [[ -r "$PREFIX/etc/hostname" ]]; then IFS= read -r HOSTNAME_VALUE <"$PREFIX/etc/hostname" || true; fi
HOSTNAME_VALUE="${HOSTNAME_VALUE//[[:space:]]/}"
if [[ -z "$HOSTNAME_VALUE" ]]; then HOSTNAME_VALUE="$(uname -n)"; fi
[[ "$HOSTNAME_VALUE" =~ ^[A-Za-z0-9._-]{1,253}$ ]] || fail "this machine's host name is not usable: $HOSTNAME_VALUE"

# Installed already: this run enrolls again (a rotated host token, with a re-bind token an
# administrator made for this host) and replaces the files only once the new enrollment is verified; a refused one (409)
# leaves the installation as it was.
REINSTALL=0
if [[ -e "$STATE_DIR/host_token" || -e "$AGENT_FILE" ]]; then
  REINSTALL=1
  say "the agent is installed here already: enrolling again"
fi

# --- JSON and HTTP (no jq; the same helpers as host-agent.sh) -----------------------------------

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

json_get_string() {
  local re="\"$2\"[[:space:]]*:[[:space:]]*\"(([^\"\\\\]|\\\\.)*)\""
  [[ "$1" =~ $re ]] || return 1
  REPLY="${BASH_REMATCH[1]}"
}

json_get_int() {
  local re="\"$2\"[[:space:]]*:[[:space:]]*([0-9]{1,15})([^0-9.eE]|$)"
  [[ "$1" =~ $re ]] || return 1
  REPLY="${BASH_REMATCH[1]}"
}

# 0 when version $1 is older than $2 (the same rule as host-agent.sh's version_lt).
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

HTTP_CODE=''
# http METHOD PATH OUTFILE [BODYFILE] [TOKEN]: bounded; the token only through curl's stdin config.
http() {
  local method="$1" url="$SERVER$2" out="$3" body="${4:-}" token="${5:-}" config='' code
  local -a args=(-sS -o "$out" -w '%{http_code}' -X "$method" --proto '=http,https'
    --connect-timeout 10 --max-time 60 --max-filesize "$MAX_BYTES")
  if [[ -n "$TLS_PIN" ]]; then args+=(-k --pinnedpubkey "$TLS_PIN"); fi
  if [[ -n "$body" ]]; then args+=(-H 'Content-Type: application/json' --data-binary "@$body"); fi
  if [[ -n "$token" ]]; then config="header = \"Authorization: Bearer $token\""; fi
  HTTP_CODE=''
  code="$(curl "${args[@]}" -K - "$url" <<<"$config" 2>/dev/null)" || code=''
  [[ "$code" =~ ^[0-9]{3}$ && "$code" != 000 ]] || return 1
  HTTP_CODE="$code"
}

fetch() {
  http GET "$1" "$2" || fail "$SERVER did not answer GET $1 (down, or the certificate does not match --fingerprint?)"
  [[ "$HTTP_CODE" == 200 ]] || fail "GET $1 answered $HTTP_CODE"
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/homefleet-install.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# --- download (public files; trusted only after the signature check below) ----------------------

fetch /api/agent/releases/manifest.json "$WORK/manifest.json"
fetch /api/agent/releases/manifest.json.sig "$WORK/manifest.sig"
MANIFEST="$(<"$WORK/manifest.json")"
json_objects_after "$MANIFEST" agents
VERSION=''
ENTRY=''
for object in "${OBJECTS[@]}"; do
  json_get_string "$object" version || continue
  [[ "$REPLY" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] || continue
  if [[ -z "$VERSION" ]] || version_lt "$VERSION" "$REPLY"; then
    VERSION="$REPLY"
    ENTRY="$object"
  fi
done
[[ -n "$VERSION" ]] || fail "the release manifest names no agent version"
{ json_get_string "$ENTRY" sha256 && [[ "$REPLY" =~ ^[0-9a-f]{64}$ ]]; } || fail "the manifest has no sha256 for $VERSION"
SHA256="$REPLY"
json_get_int "$ENTRY" size || fail "the manifest has no size for $VERSION"
SIZE="$REPLY"
{ json_get_string "$MANIFEST" issued_at && ISSUED="$(date -u -d "$REPLY" +%s 2>/dev/null)" && [[ "$ISSUED" =~ ^[0-9]{1,12}$ ]]; } ||
  fail "the release manifest has no valid issued_at"

# A reinstall is checked before it enrolls (which would rotate the running agent's token): a
# signed manifest replayed from earlier, or one offering an older agent, must not roll this host back.
if ((REINSTALL)); then
  SEEN=''
  if [[ -r "$STATE_DIR/manifest_issued_at" ]]; then IFS= read -r SEEN <"$STATE_DIR/manifest_issued_at" || true; fi
  if [[ "$SEEN" =~ ^[0-9]{1,12}$ ]] && ((ISSUED < SEEN)); then
    fail "the release manifest was issued before the newest one this host has seen: a replayed older manifest; nothing changed"
  fi
  INSTALLED_VERSION="$(sed -n 's/^HOMEFLEET_AGENT_VERSION="\(.*\)"$/\1/p' "$AGENT_FILE" 2>/dev/null | head -n1 || true)"
  if [[ -n "$INSTALLED_VERSION" ]] && version_lt "$VERSION" "$INSTALLED_VERSION"; then
    fail "the controller's newest agent ($VERSION) is older than the installed one ($INSTALLED_VERSION): not downgrading; nothing changed (run --uninstall first to install an older agent)"
  fi
fi
fetch "/api/agent/releases/$VERSION/host-agent.sh" "$WORK/host-agent.sh"

# --- enroll -----------------------------------------------------------------------------------

json_string "$HOSTNAME_VALUE" j_host
json_string "$MACHINE_ID" j_machine
json_string "$VERSION" j_version
# shellcheck disable=SC2154 # j_* are set by json_string through printf -v
printf '{"hostname":%s,"machine_id":%s,"agent_version":%s}' "$j_host" "$j_machine" "$j_version" >"$WORK/enroll.json"
http POST /api/agent/enroll "$WORK/enroll-answer.json" "$WORK/enroll.json" "$TOKEN" || fail "$SERVER did not answer the enrollment"
case "$HTTP_CODE" in
  201 | 200) ;;
  401) fail "the enrollment token was refused (wrong, expired, used up or revoked): create a new one" ;;
  403) fail "enrollment refused (403): the controller requires https" ;;
  409) fail "this machine (machine id $MACHINE_ID) is already enrolled, or the token re-binds another host: enroll it again with a re-bind token made for its host (POST /api/hosts/enrollment-tokens with host_id), or delete that host first" ;;
  *) fail "enrollment failed: the controller answered $HTTP_CODE" ;;
esac
ANSWER="$(head -c 65536 "$WORK/enroll-answer.json")"
json_get_string "$ANSWER" host_token || fail "the enrollment answer holds no host token"
HOST_TOKEN="$REPLY"
[[ "$HOST_TOKEN" =~ ^hfh_[A-Za-z0-9_-]{20,200}$ ]] || fail "the enrollment answer holds an invalid host token"
json_get_string "$ANSWER" manifest_public_key || fail "the enrollment answer holds no manifest key"
KEY="${REPLY//\\n/$'\n'}"
KEY="${KEY//\\\//\/}"
[[ "$KEY" == "-----BEGIN PUBLIC KEY-----"*"-----END PUBLIC KEY-----"* ]] || fail "the manifest key is not a PEM public key"
printf '%s\n' "${KEY%$'\n'}" >"$WORK/manifest_public_key.pem"

# --- verify -----------------------------------------------------------------------------------

enrolled_but() {
  fail "$* -- nothing was installed, but the host was enrolled: delete it in homefleet before retrying"
}
base64 -d <"$WORK/manifest.sig" >"$WORK/manifest.sig.bin" 2>/dev/null || enrolled_but "the manifest signature is not base64"
openssl pkeyutl -verify -pubin -inkey "$WORK/manifest_public_key.pem" -rawin -in "$WORK/manifest.json" \
  -sigfile "$WORK/manifest.sig.bin" >/dev/null 2>&1 || enrolled_but "the release manifest's signature does not verify with the controller's key"
if json_get_string "$MANIFEST" expires_at; then
  expires="$(date -u -d "$REPLY" +%s 2>/dev/null || echo 0)"
  (( expires > $(date -u +%s) )) || enrolled_but "the release manifest has expired"
fi
actual="$(stat -c %s "$WORK/host-agent.sh")"
[[ "$actual" == "$SIZE" ]] || enrolled_but "the agent file has $actual bytes, the signed manifest says $SIZE"
actual="$(sha256sum "$WORK/host-agent.sh")"
[[ "${actual%% *}" == "$SHA256" ]] || enrolled_but "the agent file's SHA-256 does not match the signed manifest"
grep -q "^HOMEFLEET_AGENT_VERSION=\"$VERSION\"\$" "$WORK/host-agent.sh" || enrolled_but "the agent file does not declare version $VERSION"

# --- install ----------------------------------------------------------------------------------

mkdir -p "$STATE_DIR" "$LIB_DIR" "$UNIT_DIR"
chmod 0700 "$STATE_DIR"
# A reinstall starts from a clean state: no pin or upgrade left from the previous installation.
rm -f "$STATE_DIR/tls_pin" "$STATE_DIR/upgrade" "$STATE_DIR/upgrade.ok" "$STATE_DIR/upgrade.failed" "$LIB_DIR/host-agent.sh.previous"
(
  umask 077
  printf '%s\n' "$SERVER" >"$STATE_DIR/server_url"
  printf '%s\n' "$HOST_TOKEN" >"$STATE_DIR/host_token"
  cp "$WORK/manifest_public_key.pem" "$STATE_DIR/manifest_public_key.pem"
  if [[ -n "$TLS_PIN" ]]; then printf '%s\n' "$TLS_PIN" >"$STATE_DIR/tls_pin"; fi
  printf '%s\n' "$ISSUED" >"$STATE_DIR/manifest_issued_at"
)
chmod 0600 "$STATE_DIR"/*
# Staged in a private folder beside the agent, so the rename puts it in place in one step.
STAGE="$(mktemp -d "$LIB_DIR/.install.XXXXXX")"
trap 'rm -rf "$WORK" "$STAGE"' EXIT
install -m 0755 "$WORK/host-agent.sh" "$STAGE/host-agent.sh"
mv -f "$STAGE/host-agent.sh" "$AGENT_FILE"

ROOT_ARGS=''
if [[ -n "$PREFIX" ]]; then ROOT_ARGS=" --root $PREFIX"; fi
cat >"$UNIT_DIR/$AGENT_UNIT" <<UNIT
[Unit]
Description=homefleet host agent (heartbeats to $SERVER)
After=network-online.target
Wants=network-online.target
StartLimitIntervalSec=0

[Service]
Type=simple
ExecStart=$AGENT_FILE$ROOT_ARGS
Restart=on-failure
RestartSec=10

[Install]
WantedBy=multi-user.target
UNIT
# Started by the agent during an upgrade. Its own unit, so restarting the agent's service does not
# stop it, and it runs the previous version's copy, not the file being tried.
cat >"$UNIT_DIR/$WATCHDOG_UNIT" <<UNIT
[Unit]
Description=homefleet agent upgrade watchdog (restores the previous agent if the new one never reports)

[Service]
Type=simple
ExecStart=$LIB_DIR/host-agent.sh.previous --watchdog$ROOT_ARGS
UNIT
chmod 0644 "$UNIT_DIR/$AGENT_UNIT" "$UNIT_DIR/$WATCHDOG_UNIT"

systemctl_quiet daemon-reload || fail "systemctl daemon-reload failed"
systemctl_quiet enable --now "$AGENT_UNIT" || fail "systemctl enable --now $AGENT_UNIT failed"
if ((REINSTALL)); then
  # A running agent still holds the old token: restart it on the new one.
  systemctl_quiet restart "$AGENT_UNIT" || fail "systemctl restart $AGENT_UNIT failed"
fi
say "installed agent $VERSION as $HOSTNAME_VALUE; it reports to $SERVER"
