#!/usr/bin/env bats
# The uninstall command: the agent removes what the installer put there, then confirms with the
# receipt token, retrying with backoff until the server takes it (bounded).

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() { load agent_helper; reset_agent_test; use_installed_root; : >"$SYSTEMCTL_LOG"; }

uninstall_command() {
  control "{\"receipt_token\":\"$RECEIPT_TOKEN\",\"receipt_failures\":${1:-0},\"commands\":[{\"type\":\"uninstall\",\"operation_id\":\"op-42\",\"receipt_token\":\"$RECEIPT_TOKEN\"}]}"
}

assert_removed() {
  [[ ! -e "$STATE" && ! -e "$ROOT_DIR/usr/local/lib/homefleet-agent" ]]
  [[ ! -e "$ROOT_DIR/etc/systemd/system/homefleet-agent.service" && ! -e "$ROOT_DIR/etc/systemd/system/homefleet-agent-watchdog.service" ]]
}

@test "uninstall removes the agent, its units and its state, then sends the receipt once" {
  uninstall_command 0
  run_agent -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_removed
  assert_equal "$(cat "$SYSTEMCTL_LOG")" $'disable homefleet-agent.service homefleet-agent-watchdog.service\ndaemon-reload'
  assert_equal "$(request_count /api/agent/receipts/op-42)" 1
  assert_equal "$(last_request /api/agent/receipts/op-42 r.method)" POST
  assert_equal "$(last_request /api/agent/receipts/op-42 r.headers.authorization)" "Bearer $RECEIPT_TOKEN"
  [[ "$output" != *hfr_* && "$output" != *hfh_* ]]
}

@test "the receipt is retried with backoff until the server takes it" {
  uninstall_command 3
  local started=$SECONDS
  run_agent HOMEFLEET_RECEIPT_MAX_DELAY_S=1 -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/receipts/op-42)" 4
  [[ "$output" == *"retrying in 1s"* && "$output" == *"confirmed the removal"* ]]
  ((SECONDS - started >= 3))
  assert_removed
}

@test "the receipt is also retried while the server does not answer, and given up after the deadline" {
  # The heartbeat reaches the mock; receipts never get an answer.
  control "{\"receipt_token\":\"$RECEIPT_TOKEN\",\"hang\":[\"/api/agent/receipts/op-42\"],\"commands\":[{\"type\":\"uninstall\",\"operation_id\":\"op-42\",\"receipt_token\":\"$RECEIPT_TOKEN\"}]}"
  local started=$SECONDS
  run_agent HOMEFLEET_RECEIPT_MAX_DELAY_S=1 HOMEFLEET_RECEIPT_DEADLINE_S=4 HOMEFLEET_CURL_MAX_TIME=1 -- --once
  [[ "$status" -eq 1 && "$output" == *"giving up"* ]] || { echo "$status $output" >&2; return 1; }
  # The deadline is 4 s; the bound only proves it gave up rather than retrying on (a loaded machine runs the heartbeat slower).
  ((SECONDS - started <= 25))
  local n
  n="$(request_count /api/agent/receipts/op-42)"
  ((n >= 2)) || { echo "$n receipts" >&2; return 1; }
  assert_removed
}

@test "an uninstall command without a valid receipt token or operation id removes nothing" {
  control '{"commands":[{"type":"uninstall","operation_id":"op-42"}]}'
  run_agent -- --once
  [[ "$status" -eq 0 && -f "$INSTALLED_AGENT" && -f "$STATE/host_token" ]]
  control "{\"commands\":[{\"type\":\"uninstall\",\"operation_id\":\"a/b\",\"receipt_token\":\"$RECEIPT_TOKEN\"}]}"
  run_agent -- --once
  [[ "$status" -eq 0 && -f "$INSTALLED_AGENT" && -f "$STATE/host_token" ]]
  control '{"commands":[{"type":"uninstall","operation_id":"op-42","receipt_token":"hfh_host-token-for-bats-0123456789abcdef"}]}'
  run_agent -- --once
  [[ "$status" -eq 0 && -f "$INSTALLED_AGENT" && -f "$STATE/host_token" ]]
  assert_equal "$(request_count /api/agent/receipts/op-42)" 0
}

@test "the looping agent uninstalls on the heartbeat that carries the command and exits 0" {
  control '{"interval":1}'
  start_agent_loop
  wait_for '[[ "$(request_count /api/agent/heartbeat)" -ge 1 ]]'
  uninstall_command 0
  wait_for '[[ "$(request_count /api/agent/receipts/op-42)" == 1 ]]'
  local rc=0
  wait "$AGENT_PID" || rc=$?
  assert_equal "$rc" 0
  assert_removed
}

@test "a temp folder that cannot be removed at exit leaves the exit status as it was" {
  # The command poll's curl can write into the work folder while the exit removes it; here an rm
  # that fails on the agent's temp folders stands in for that race, deterministically.
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  cat >"$BATS_TEST_TMPDIR/bin/rm" <<'SCRIPT'
#!/usr/bin/env bash
for a in "$@"; do [[ "$a" == "$TMPDIR"/homefleet-agent.* ]] && { echo "rm: cannot remove '$a': Directory not empty" >&2; exit 1; }; done
exec /bin/rm "$@"
SCRIPT
  chmod +x "$BATS_TEST_TMPDIR/bin/rm"
  TEST_PATH="$BATS_TEST_TMPDIR/bin:$TEST_PATH"
  uninstall_command 0
  run_agent -- --once
  assert_equal "$status" 0
  assert_removed
  assert_equal "$(request_count /api/agent/receipts/op-42)" 1
}
