#!/usr/bin/env bash
# homefleet host agent installer (served by homefleet at /install/agent.sh); usage() below says
# how it is called.
#
# What it does: downloads the release manifest, its signature and the newest agent it names;
# enrolls with the token (POST /api/agent/enroll), which gives the host token and the controller's
# manifest key; verifies the manifest's Ed25519 signature with that key and the agent's SHA-256 and
# size; then installs:
#   <root>/usr/local/lib/homefleet-agent/host-agent.sh
#   <root>/etc/homefleet-agent/  (0700; server_url, host_token, manifest_public_key.pem, tls_pin,
#                                manifest_issued_at, allow_scripts with --allow-scripts: 0600)
#   <root>/etc/systemd/system/homefleet-agent.service, homefleet-agent-watchdog.service
# and runs `systemctl daemon-reload` and `systemctl enable --now homefleet-agent.service`.
# Run again where the agent is installed, it refuses a manifest issued before the newest one that
# host has seen (a replay) and an agent older than the installed one (uninstall first for that).

# Replaced by the controller when it serves this file.
HOMEFLEET_SERVER_DEFAULT=""

set -euo pipefail

readonly AGENT_UNIT=homefleet-agent.service
readonly WATCHDOG_UNIT=homefleet-agent-watchdog.service
readonly MAX_DOWNLOAD_BYTES=4194304
# Read by http (lib/common.sh).
readonly CONNECT_TIMEOUT=10 CURL_MAX_TIME=60

# The helpers this installer shares with the agent; the controller serves them inlined here.
# shellcheck source=reporter/lib/json-string.sh
source "${BASH_SOURCE[0]%/*}/lib/json-string.sh" # homefleet:include
# shellcheck source=reporter/lib/common.sh
source "${BASH_SOURCE[0]%/*}/lib/common.sh" # homefleet:include

usage() {
  cat <<'USAGE'
Usage: curl -fsSL https://<homefleet>/install/agent.sh | sudo bash -s -- --token hfe_... [--fingerprint SHA256]
       install-agent.sh [--server URL] --token hfe_... [--fingerprint SHA256] [--allow-scripts] [--root DIR]
       install-agent.sh --uninstall [--root DIR]
       install-agent.sh --help

Installs the homefleet host agent on this Proxmox VE node as the systemd service
homefleet-agent.service, enrolled with the controller. Run as root.

  --server URL         the controller (the installer homefleet serves defaults to the address it
                       was downloaded from)
  --token hfe_...      an enrollment token from the dashboard (Hosts > Add a host)
  --fingerprint PIN    pin the controller's self-signed certificate instead of checking it against
                       the system's CAs: the SHA-256 of the certificate's public key, base64 as the
                       dashboard prints it (sha256//<base64> or <base64>) or 64 hex digits
  --allow-scripts      let homefleet's scripts run on this host itself, as root (scripts inside its
                       guests need no permission here); without it such a script fails with
                       "scripts are not allowed on this host". Only this installer sets it: run it
                       again without the option to take the permission back
  --root DIR           install under DIR instead of / (tests; systemctl is the one on PATH)
  --uninstall          stop the agent and remove everything this installer put on the machine
  -h, --help           print this text

It downloads the signed release manifest and the newest agent it names, enrolls with the token,
checks the manifest's signature with the key the controller gave at enrollment and the agent's
SHA-256 and size, then installs the agent in /usr/local/lib/homefleet-agent/, its state (mode 0600)
in /etc/homefleet-agent/ and its units in /etc/systemd/system/, and starts it. Run again where the
agent is installed, it enrolls again (with a re-bind token) and refuses a replayed older manifest
or an older agent. Needs bash, curl, coreutils, openssl, perl with JSON::PP and systemd.
USAGE
}

fail() {
  printf 'homefleet install: %s\n' "$*" >&2
  exit 1
}
say() { printf 'homefleet install: %s\n' "$*" >&2; }

SERVER_URL="$HOMEFLEET_SERVER_DEFAULT"
TOKEN=''
FINGERPRINT=''
ROOT=/
UNINSTALL=0
ALLOW_SCRIPTS=0
while (($# > 0)); do
  case "$1" in
    --server | --token | --fingerprint | --root)
      [[ $# -ge 2 ]] || fail "$1 needs a value"
      case "$1" in
        --server) SERVER_URL="$2" ;;
        --token) TOKEN="$2" ;;
        --fingerprint) FINGERPRINT="$2" ;;
        --root) ROOT="$2" ;;
      esac
      shift
      ;;
    --uninstall) UNINSTALL=1 ;;
    --allow-scripts) ALLOW_SCRIPTS=1 ;;
    -h | --help) usage; exit 0 ;;
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

for tool in curl openssl sha256sum base64 timeout perl; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found"
done
json_reader_present || fail "perl's JSON::PP not found (every Proxmox VE node has it: is this one?)"
[[ -n "$TOKEN" ]] || fail "--token hfe_... is required (create one under Hosts > Add a host)"
[[ "$TOKEN" =~ ^hfe_[A-Za-z0-9_-]{20,200}$ ]] || fail "--token must be an enrollment token (hfe_...)"
SERVER_URL="${SERVER_URL%/}"
[[ -n "$SERVER_URL" ]] || fail "--server URL is required"
url_re='^https?://[][A-Za-z0-9._~:@-]+(/[A-Za-z0-9._~/-]*)?$'
[[ "$SERVER_URL" =~ $url_re ]] || fail "--server must be an http(s) URL"

# The pin curl takes: sha256//<base64 of the SHA-256 of the certificate's public key>.
TLS_PIN=''
if [[ -n "$FINGERPRINT" ]]; then
  normalize_pin "$FINGERPRINT" || fail "--fingerprint must be the SHA-256 of the certificate's public key, base64 (as the dashboard shows it)"
  TLS_PIN="$REPLY"
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

# --- download (public files; trusted only after the signature check below) ----------------------

fetch() {
  http GET "$1" "$2" || fail "$SERVER_URL did not answer GET $1 (down, or the certificate does not match --fingerprint?)"
  [[ "$HTTP_CODE" == 200 ]] || fail "GET $1 answered $HTTP_CODE"
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/homefleet-install.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

if ! manifest_download "$WORK"; then
  [[ -n "$HTTP_CODE" ]] || fail "$SERVER_URL did not answer (down, or the certificate does not match --fingerprint?)"
  fail "$REPLY"
fi
# A reinstall is checked before it enrolls (which would rotate the running agent's token): a
# signed manifest replayed from earlier, or one offering an older agent, must not roll this host back.
SEEN=0
if ((REINSTALL)) && [[ -r "$STATE_DIR/manifest_issued_at" ]]; then IFS= read -r SEEN <"$STATE_DIR/manifest_issued_at" || true; fi
# shellcheck disable=SC2034 # filled by manifest_read and read by json_get, through a nameref
declare -A MANIFEST=()
manifest_read "$WORK" MANIFEST "$SEEN" || fail "$REPLY; nothing changed"
manifest_entry MANIFEST || fail "the release manifest names no agent version"
ENTRY="$REPLY"
json_str MANIFEST "$ENTRY.version"
VERSION="$REPLY"
if ((REINSTALL)); then
  INSTALLED_VERSION="$(sed -n 's/^HOMEFLEET_AGENT_VERSION="\(.*\)"$/\1/p' "$AGENT_FILE" 2>/dev/null | head -n1 || true)"
  if [[ -n "$INSTALLED_VERSION" ]] && version_lt "$VERSION" "$INSTALLED_VERSION"; then
    fail "the controller's newest agent ($VERSION) is older than the installed one ($INSTALLED_VERSION): not downgrading; nothing changed (run --uninstall first to install an older agent)"
  fi
fi
manifest_agent_path MANIFEST "$ENTRY" "$VERSION"
fetch "$REPLY" "$WORK/host-agent.sh"

# --- enroll -----------------------------------------------------------------------------------

json_string "$HOSTNAME_VALUE" j_host
json_string "$MACHINE_ID" j_machine
json_string "$VERSION" j_version
# shellcheck disable=SC2154 # j_* are set by json_string through printf -v
printf '{"hostname":%s,"machine_id":%s,"agent_version":%s}' "$j_host" "$j_machine" "$j_version" >"$WORK/enroll.json"
http POST /api/agent/enroll "$WORK/enroll-answer.json" "$WORK/enroll.json" "$TOKEN" || fail "$SERVER_URL did not answer the enrollment"
case "$HTTP_CODE" in
  201 | 200) ;;
  401) fail "the enrollment token was refused (wrong, expired, used up or revoked): create a new one" ;;
  403) fail "enrollment refused (403): the controller requires https" ;;
  409) fail "this machine (machine id $MACHINE_ID) is already enrolled, or the token re-binds another host: enroll it again with a re-bind token made for its host (POST /api/hosts/enrollment-tokens with host_id), or delete that host first" ;;
  *) fail "enrollment failed: the controller answered $HTTP_CODE" ;;
esac
# shellcheck disable=SC2034 # filled by json_parse and read by json_get, through a nameref
declare -A ANSWER=()
{ (($(stat -c %s "$WORK/enroll-answer.json") <= 65536)) && json_parse ANSWER "$WORK/enroll-answer.json"; } ||
  fail "the enrollment answer is not JSON"
json_str ANSWER host_token || fail "the enrollment answer holds no host token"
HOST_TOKEN="$REPLY"
[[ "$HOST_TOKEN" =~ ^hfh_[A-Za-z0-9_-]{20,200}$ ]] || fail "the enrollment answer holds an invalid host token"
json_str ANSWER manifest_public_key || fail "the enrollment answer holds no manifest key"
[[ "$REPLY" == "-----BEGIN PUBLIC KEY-----"*"-----END PUBLIC KEY-----"* ]] || fail "the manifest key is not a PEM public key"
printf '%s\n' "${REPLY%$'\n'}" >"$WORK/manifest_public_key.pem"

# --- verify -----------------------------------------------------------------------------------

enrolled_but() {
  fail "$* -- nothing was installed, but the host was enrolled: delete it in homefleet before retrying"
}
manifest_signature_ok "$WORK" "$WORK/manifest_public_key.pem" || enrolled_but "$REPLY"
manifest_unexpired MANIFEST || enrolled_but "$REPLY"
agent_file_ok "$WORK/host-agent.sh" MANIFEST "$ENTRY" "$VERSION" || enrolled_but "$REPLY"
ISSUED="$MANIFEST_ISSUED"

# --- install ----------------------------------------------------------------------------------

mkdir -p "$STATE_DIR" "$LIB_DIR" "$UNIT_DIR"
chmod 0700 "$STATE_DIR"
# A reinstall starts from a clean state: no pin or upgrade left from the previous installation.
rm -f "$STATE_DIR/tls_pin" "$STATE_DIR/upgrade" "$STATE_DIR/upgrade.ok" "$STATE_DIR/upgrade.failed" "$STATE_DIR/allow_scripts" "$LIB_DIR/host-agent.sh.previous"
(
  umask 077
  printf '%s\n' "$SERVER_URL" >"$STATE_DIR/server_url"
  printf '%s\n' "$HOST_TOKEN" >"$STATE_DIR/host_token"
  cp "$WORK/manifest_public_key.pem" "$STATE_DIR/manifest_public_key.pem"
  if [[ -n "$TLS_PIN" ]]; then printf '%s\n' "$TLS_PIN" >"$STATE_DIR/tls_pin"; fi
  printf '%s\n' "$ISSUED" >"$STATE_DIR/manifest_issued_at"
  # Read by the agent only: the controller has no way to write it (PRODUCT.md: "the server cannot change it").
  if ((ALLOW_SCRIPTS)); then printf 'yes\n' >"$STATE_DIR/allow_scripts"; fi
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
Description=homefleet host agent (heartbeats to $SERVER_URL)
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
say "installed agent $VERSION as $HOSTNAME_VALUE; it reports to $SERVER_URL"
if ((ALLOW_SCRIPTS)); then say "scripts may run on this host itself (--allow-scripts)"; fi
