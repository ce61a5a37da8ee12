# Shared by the agent-*.bats and installer-*.bats files: `load agent_helper`.
bats_require_minimum_version 1.5.0
REPORTER_DIR="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"

# The script $1 as the controller serves it (server/releases/assemble.ts): each include line replaced
# by the helper file it names. shared-helpers.bats checks that the built server serves the same bytes.
assemble_script() {
  local line dir="${1%/*}" re='^(source|\.) "\$\{BASH_SOURCE\[0\]%/\*\}/(lib/[a-z0-9-]+\.sh)" # homefleet:include$'
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" =~ $re ]]; then cat "$dir/${BASH_REMATCH[2]}"; else printf '%s\n' "$line"; fi
  done <"$1"
}

# The agent and the installer the tests run: assembled, as they are served, once per .bats file.
AGENT="$BATS_FILE_TMPDIR/served/host-agent.sh"
INSTALLER="$BATS_FILE_TMPDIR/served/install-agent.sh"
# In a bash of its own: in bats' shell, whose DEBUG trap runs on every command, reading the agent line
# by line took two CPU-seconds per file.
if [[ ! -s "$AGENT" || ! -s "$INSTALLER" ]]; then
  mkdir -p "$BATS_FILE_TMPDIR/served"
  bash -c "$(declare -f assemble_script)"'; assemble_script "$1" >"$2"; assemble_script "$3" >"$4"' _ \
    "$REPORTER_DIR/host-agent.sh" "$AGENT" "$REPORTER_DIR/install-agent.sh" "$INSTALLER"
fi
FIXTURES="$BATS_TEST_DIRNAME/fixtures"
# shellcheck source=reporter/test/node_e.bash
source "$BATS_TEST_DIRNAME/node_e.bash"
BASH_BIN="$(command -v bash)"
ENROLL_TOKEN=hfe_enrollment-token-for-bats-0123456789
HOST_TOKEN=hfh_host-token-for-bats-0123456789abcdef
RECEIPT_TOKEN=hfr_receipt-token-for-bats-0123456789abcd
# No agent or installer run may take longer than this, whatever the server does.
RUN_LIMIT=20

# Requests are only ever sent to servers this suite started on 127.0.0.1.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy

# The mock agent API (fixtures/mock-agent-server.mjs), one per .bats file, in $MOCK_DIR.
start_agent_mock() {
  export MOCK_DIR="$BATS_FILE_TMPDIR/mock"
  local i
  mkdir -p "$MOCK_DIR/releases/1.0.0"
  cp "$AGENT" "$MOCK_DIR/releases/1.0.0/host-agent.sh"
  : >"$MOCK_DIR/requests.jsonl"
  # fd 3 closed: bats waits for every process holding it.
  # MOCK_TLS=(cert key): the mock speaks HTTPS with that certificate.
  node "$FIXTURES/mock-agent-server.mjs" "$MOCK_DIR" "${MOCK_TLS[@]+"${MOCK_TLS[@]}"}" 3>&- &
  export MOCK_PID=$!
  for ((i = 0; i < 100; i++)); do
    [[ -s "$MOCK_DIR/port" ]] && break
    sleep 0.05
  done
  [[ -s "$MOCK_DIR/port" ]] || { echo "mock server did not start" >&2; return 1; }
  MOCK="http://127.0.0.1:$(cat "$MOCK_DIR/port")"
  export MOCK
}

stop_agent_mock() {
  if [[ -n "${MOCK_PID:-}" ]]; then kill "$MOCK_PID" 2>/dev/null || true; fi
}

# control '{json}': how the mock answers from now on.
control() { printf '%s' "$1" >"$MOCK_DIR/control.json"; }

# Each test: no recorded requests, default answers, a fresh root with a machine id and host name,
# and a PATH holding the fake qm, pct, ip, pveversion and systemctl.
reset_agent_test() {
  : >"$MOCK_DIR/requests.jsonl"
  control '{}'
  rm -rf "$MOCK_DIR/releases"
  mkdir -p "$MOCK_DIR/releases/1.0.0"
  cp "$AGENT" "$MOCK_DIR/releases/1.0.0/host-agent.sh"
  export ROOT_DIR="$BATS_TEST_TMPDIR/root"
  mkdir -p "$ROOT_DIR/etc"
  printf '0123456789abcdef0123456789abcdef\n' >"$ROOT_DIR/etc/machine-id"
  printf 'pve1\n' >"$ROOT_DIR/etc/hostname"
  export STATE="$ROOT_DIR/etc/homefleet-agent"
  export INSTALLED_AGENT="$ROOT_DIR/usr/local/lib/homefleet-agent/host-agent.sh"
  export SYSTEMCTL_LOG="$BATS_TEST_TMPDIR/systemctl.log"
  : >"$SYSTEMCTL_LOG"
  TEST_PATH="$FIXTURES/agent-bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
}

# The environment of every run: nothing from the test's own environment but these.
base_env() {
  BASE_ENV=("PATH=$TEST_PATH" "HOME=$BATS_TEST_TMPDIR" "TMPDIR=$BATS_TEST_TMPDIR"
    "FAKE_SYSTEMCTL_LOG=$SYSTEMCTL_LOG" HOMEFLEET_INTERVAL_MIN_S=1 HOMEFLEET_CURL_MAX_TIME=3 HOMEFLEET_CONNECT_TIMEOUT=1)
}

# A curl in $BATS_TEST_TMPDIR/bin that appends its arguments to $BATS_TEST_TMPDIR/curl-args, then runs the real one.
record_curl_args() {
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  cat >"$BATS_TEST_TMPDIR/bin/curl" <<SCRIPT
#!/usr/bin/env bash
printf '%s\n' "\$*" >>"$BATS_TEST_TMPDIR/curl-args"
exec /usr/bin/curl "\$@"
SCRIPT
  chmod +x "$BATS_TEST_TMPDIR/bin/curl"
}

# start_agent_loop [NAME=value ...]: the installed agent looping in the background, those assignments
# added to its environment; its pid is in AGENT_PID. stop_agent_loop ends it with SIGTERM.
start_agent_loop() {
  base_env
  env -i "${BASE_ENV[@]}" "$@" "$BASH_BIN" "$INSTALLED_AGENT" --root "$ROOT_DIR" 2>/dev/null 3>&- &
  AGENT_PID=$!
}

stop_agent_loop() {
  kill -TERM "$AGENT_PID"
  wait "$AGENT_PID" || true
}

# run_installer [NAME=value ...] -- args...: the installer with a timeout, stdout and stderr in $output.
run_installer() {
  local -a assignments=()
  while [[ $# -gt 0 && "$1" != -- ]]; do assignments+=("$1"); shift; done
  shift
  base_env
  run timeout --kill-after=2 "$RUN_LIMIT" env -i "${BASE_ENV[@]}" "${assignments[@]}" "$BASH_BIN" "$INSTALLER" "$@"
}

# install_ok: the installer against the mock, as the tests' starting point.
install_ok() {
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  if [[ "$status" -ne 0 ]]; then
    printf 'installer failed (%s):\n%s\n' "$status" "$output" >&2
    return 1
  fi
}

# An installed root made once per file by the real installer (setup_file: make_installed_template),
# copied into each test's root by use_installed_root: the installer takes most of a second.
make_installed_template() {
  local BATS_TEST_TMPDIR="$BATS_FILE_TMPDIR/template-run"
  mkdir -p "$BATS_TEST_TMPDIR"
  reset_agent_test
  ROOT_DIR="$BATS_FILE_TMPDIR/template"
  mkdir -p "$ROOT_DIR/etc"
  printf '0123456789abcdef0123456789abcdef\n' >"$ROOT_DIR/etc/machine-id"
  printf 'pve1\n' >"$ROOT_DIR/etc/hostname"
  install_ok
}

use_installed_root() {
  cp -a "$BATS_FILE_TMPDIR/template/." "$ROOT_DIR/"
  sed -i "s|$BATS_FILE_TMPDIR/template|$ROOT_DIR|g" "$ROOT_DIR"/etc/systemd/system/*.service
  : >"$MOCK_DIR/requests.jsonl"
}

# run_agent [NAME=value ...] -- args...: the installed agent (or $AGENT_UNDER_TEST), bounded.
run_agent() {
  local -a assignments=()
  while [[ $# -gt 0 && "$1" != -- ]]; do assignments+=("$1"); shift; done
  shift
  base_env
  run timeout --kill-after=2 "$RUN_LIMIT" env -i "${BASE_ENV[@]}" "${assignments[@]}" "$BASH_BIN" "${AGENT_UNDER_TEST:-$INSTALLED_AGENT}" --root "$ROOT_DIR" "$@"
}

# Number of requests the mock recorded, optionally only those to path $1 (paths hold no characters
# that JSON escapes; grep, because a node start per call made the suite slow).
request_count() {
  if [[ -n "${1:-}" ]]; then
    grep -c -F "\"path\":\"$1\"," "$MOCK_DIR/requests.jsonl" || true
  else
    grep -c '' "$MOCK_DIR/requests.jsonl" || true
  fi
}

# last_request PATH 'js expression of r': a value of the last request to PATH (r.json: parsed body).
last_request() {
  node_e '
    const fs = require("fs");
    const rows = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const r = rows.filter((x) => x.path === process.argv[2]).pop();
    if (!r) { console.error("no request to " + process.argv[2]); process.exit(1); }
    r.json = r.body ? JSON.parse(r.body) : undefined;
    const v = new Function("r", "return (" + process.argv[3] + ");")(r);
    console.log(typeof v === "string" ? v : JSON.stringify(v));
  ' "$MOCK_DIR/requests.jsonl" "$1" "$2"
}

# "true" when every heartbeat the mock received came at least $1 ms after the one before, else the gaps.
heartbeat_gaps_at_least() {
  node_e '
    const fs = require("fs");
    const at = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l))
      .filter((r) => r.path === "/api/agent/heartbeat").map((r) => r.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    console.log(gaps.every((g) => g >= Number(process.argv[2])) ? "true" : "gaps " + gaps.join(" ") + " ms");
  ' "$MOCK_DIR/requests.jsonl" "$1"
}

assert_equal() {
  if [[ "$1" != "$2" ]]; then
    printf 'expected: %s\nactual:   %s\n' "$2" "$1" >&2
    return 1
  fi
}

# wait_for 'condition' [seconds]: polls a bash condition every 0.1 s.
wait_for() {
  local limit="${2:-10}" i
  for ((i = 0; i < limit * 10; i++)); do
    if eval "$1"; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for: $1" >&2
  return 1
}

# A release of the current agent under another version number, served by the mock.
make_release() {
  mkdir -p "$MOCK_DIR/releases/$1"
  sed "s/^HOMEFLEET_AGENT_VERSION=.*/HOMEFLEET_AGENT_VERSION=\"$1\"/" "$AGENT" >"$MOCK_DIR/releases/$1/host-agent.sh"
}
