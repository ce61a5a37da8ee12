# Shared by every .bats file: `load test_helper` in setup(), setup_file() and teardown_file().
REPORTER="$(cd "$BATS_TEST_DIRNAME/.." && pwd)/usage-report.sh"
FIXTURES="$BATS_TEST_DIRNAME/fixtures"
# shellcheck source=reporter/test/node_e.bash
source "$BATS_TEST_DIRNAME/node_e.bash"
TEST_UUID=3b241101-e2bb-4255-8caf-4136c566a962
BASH_BIN="$(command -v bash)"
# No caller may take longer than this, whatever the server does.
CALLER_LIMIT=15

# Requests are only ever sent to servers this suite started on 127.0.0.1.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy

# The mock ingestion server, one per .bats file (fixtures/mock-ingest.mjs).
start_mock() {
  export MOCK_RECORDS="$BATS_FILE_TMPDIR/requests.jsonl"
  local port_file="$BATS_FILE_TMPDIR/mock.port" i
  : >"$MOCK_RECORDS"
  # fd 3 closed: bats waits for every process holding it.
  # MOCK_TLS=(cert key): the mock speaks HTTPS with that certificate.
  node "$FIXTURES/mock-ingest.mjs" "$MOCK_RECORDS" "$port_file" ${MOCK_TLS[@]+"${MOCK_TLS[@]}"} 3>&- &
  export MOCK_PID=$!
  for ((i = 0; i < 100; i++)); do
    [[ -s "$port_file" ]] && break
    sleep 0.05
  done
  [[ -s "$port_file" ]] || { echo "mock server did not start" >&2; return 1; }
  MOCK_PORT="$(cat "$port_file")"
  export MOCK_PORT
  export MOCK="http://127.0.0.1:$MOCK_PORT"
}

stop_mock() {
  if [[ -n "${MOCK_PID:-}" ]]; then kill "$MOCK_PID" 2>/dev/null || true; fi
}

# Each test starts with no recorded requests and a PATH holding the pveversion stand-in.
reset_test() {
  : >"$MOCK_RECORDS"
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  ln -sf "$FIXTURES/pveversion" "$BATS_TEST_TMPDIR/bin/pveversion"
  TEST_PATH="$BATS_TEST_TMPDIR/bin:/usr/local/bin:/usr/bin:/bin"
  printf 'DIAGNOSTICS=yes\n' >"$BATS_TEST_TMPDIR/diagnostics"
}

# The environment a provisioning script has before it reports a container install.
default_env() {
  DEFAULT_ENV=(
    "PATH=$TEST_PATH"
    "HOME=$BATS_TEST_TMPDIR"
    "USAGE_API_BASE=$MOCK/ok"
    "USAGE_API_TIMEOUT=2"
    "USAGE_SETTINGS_FILE=$BATS_TEST_TMPDIR/diagnostics"
    "RANDOM_UUID=$TEST_UUID"
    "DIAGNOSTICS=yes"
    "CT_TYPE=1" "DISK_SIZE=8" "CORE_COUNT=2" "RAM_SIZE=2048"
    "var_os=debian" "var_version=12" "DISABLEIP6=no" "NSAPP=homeassistant" "METHOD=default"
  )
}

# caller [NAME=value ...] -- 'commands': a provisioning script under `set -euo pipefail` that
# sources the reporter, runs the commands and then says it is still running (within
# CALLER_LIMIT seconds). Assignments
# override the default environment; everything else in the test's environment is left out.
caller() {
  local -a assignments=()
  while [[ $# -gt 0 && "$1" != -- ]]; do assignments+=("$1"); shift; done
  shift
  default_env
  # timeout: a reporter that forgot its own bound fails the test instead of hanging the suite.
  timeout --kill-after=2 "$CALLER_LIMIT" env -i "${DEFAULT_ENV[@]}" "${assignments[@]}" "$BASH_BIN" --noprofile --norc -c \
    "set -euo pipefail; source '$REPORTER'; $1; echo caller-still-running"
}

# Number of requests the mock server recorded (one line each).
request_count() {
  if [[ -f "$MOCK_RECORDS" ]]; then grep -c '' "$MOCK_RECORDS" || true; else echo 0; fi
}

# request N 'js expression of r': a value of request N (r.method, r.path, r.headers, r.json: the
# parsed body; the script fails when it is not JSON).
request() {
  # shellcheck disable=SC2016 # JavaScript: its $ are its own
  node_e '
    const [file, index, expression] = process.argv.slice(1);
    const fs = require("fs");
    const records = (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : []).map((line) => JSON.parse(line));
    const r = records[Number(index)];
    if (!r) {
      console.error(`no request #${index} (${records.length} recorded)`);
      process.exit(1);
    }
    r.json = r.body === "" ? undefined : JSON.parse(r.body);
    const value = new Function("r", `return (${expression});`)(r);
    console.log(typeof value === "string" ? value : JSON.stringify(value));
  ' "$MOCK_RECORDS" "$1" "$2"
}

# assert_request N 'expression' expected
assert_request() {
  local actual
  actual="$(request "$1" "$2")"
  if [[ "$actual" != "$3" ]]; then
    printf 'request %s: %s\n  expected: %s\n  actual:   %s\n' "$1" "$2" "$3" "$actual" >&2
    return 1
  fi
}

assert_requests() {
  local count
  count="$(request_count)"
  if [[ "$count" != "$1" ]]; then
    printf 'expected %s request(s), the mock server recorded %s\n' "$1" "$count" >&2
    cat "$MOCK_RECORDS" >&2
    return 1
  fi
}

# The caller finished normally and printed nothing of its own besides its last line.
assert_caller_kept_running() {
  if [[ "$status" -ne 0 || "$output" != caller-still-running ]]; then
    printf 'caller status %s, output:\n%s\n' "$status" "$output" >&2
    return 1
  fi
}
