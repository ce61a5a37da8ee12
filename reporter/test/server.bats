#!/usr/bin/env bats
# The real function against the real homefleet server: the record goes from installing to final.

ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"

setup_file() {
  load test_helper
  cd "$ROOT"
  node build/build.mjs --if-missing 3>&-
  export SERVER_DB="$BATS_FILE_TMPDIR/homefleet.db"
  local log="$BATS_FILE_TMPDIR/server.log" i
  DB_PATH="$SERVER_DB" PORT=0 HOST=127.0.0.1 LOG_LEVEL=info node dist/server/main.js >"$log" 2>&1 3>&- &
  export SERVER_PID=$!
  for ((i = 0; i < 200; i++)); do
    grep -q 'listening on http://127.0.0.1:' "$log" && break
    sleep 0.05
  done
  SERVER_PORT="$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/.*://')"
  [[ -n "$SERVER_PORT" ]] || { cat "$log" >&2; return 1; }
  export SERVER_PORT
}

teardown_file() {
  if [[ -n "${SERVER_PID:-}" ]]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}

setup() {
  load test_helper
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  ln -sf "$FIXTURES/pveversion" "$BATS_TEST_TMPDIR/bin/pveversion"
  printf 'DIAGNOSTICS=yes\n' >"$BATS_TEST_TMPDIR/diagnostics"
}

# report [NAME=value ...] -- 'commands': a provisioning script pointed at the homefleet server.
report() {
  local -a assignments=()
  while [[ $# -gt 0 && "$1" != -- ]]; do assignments+=("$1"); shift; done
  shift
  timeout --kill-after=2 "$CALLER_LIMIT" env -i "PATH=$BATS_TEST_TMPDIR/bin:/usr/local/bin:/usr/bin:/bin" \
    "USAGE_API_BASE=http://127.0.0.1:$SERVER_PORT/api/usage" "USAGE_SETTINGS_FILE=$BATS_TEST_TMPDIR/diagnostics" \
    CT_TYPE=1 DISK_SIZE=8 CORE_COUNT=2 RAM_SIZE=2048 var_os=debian var_version=12 DISABLEIP6=no NSAPP=jellyfin METHOD=default \
    "${assignments[@]}" "$BASH_BIN" --noprofile --norc -c \
    "set -euo pipefail; source '$REPORTER'; $1; echo caller-still-running"
}

# stored <random_id> 'js expression of row'
stored() {
  node "$FIXTURES/read-usage.mjs" "$SERVER_DB" "$1" | node -e '
    let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => {
      const row = JSON.parse(s);
      const v = new Function("row", "return (" + process.argv[1] + ");")(row);
      console.log(typeof v === "string" ? v : JSON.stringify(v));
    });' "$2"
}

@test "a container install goes from installing to its final status on the homefleet server" {
  local id=8a3e4f4c-1d2b-4c5e-9f60-7a8b9c0d1e2f
  run report "RANDOM_UUID=$id" -- post_to_api
  assert_caller_kept_running
  [[ "$(stored "$id" row.status)" == installing ]]
  [[ "$(stored "$id" '[row.type, row.ct_type, row.disk_size, row.core_count, row.ram_size, row.nsapp, row.pve_version, row.error]')" \
    == '["lxc",1,8,2,2048,"jellyfin","8.2.4",null]' ]]

  run report "RANDOM_UUID=$id" -- 'post_update_to_api success'
  assert_caller_kept_running
  [[ "$(stored "$id" '[row.status, row.error]')" == '["success","No error message"]' ]]
}

@test "a failed VM install keeps its error text exactly" {
  local id=9b4f5a5d-2e3c-4d6f-8a71-8b9c0d1e2f30
  export EXPECTED=$'apt-get "install" failed\n\tC:\\path é ✗ \x01'
  run report "RANDOM_UUID=$id" DISK_SIZE=32G "ERROR_TEXT=$EXPECTED" -- 'post_to_api_vm; post_update_to_api failed "$ERROR_TEXT"'
  assert_caller_kept_running
  [[ "$(stored "$id" '[row.type, row.ct_type, row.disk_size, row.disableip6, row.status]')" == '["vm",2,32,"","failed"]' ]]
  [[ "$(stored "$id" 'row.error === process.env.EXPECTED')" == true ]]
}

@test "an update for an id the server never saw is refused and ignored: nothing is stored" {
  local id=0c5a6b6e-3f4d-4e70-9b82-9c0d1e2f3041
  run report "RANDOM_UUID=$id" -- 'post_update_to_api done'
  assert_caller_kept_running
  [[ "$(stored "$id" row)" == null ]]
}
