#!/usr/bin/env bats
# host-agent.sh never crashes on a server that is down, slow or answers garbage, and every curl
# is bounded. The agent runs under `set -euo pipefail` itself; --once exits 75 when the heartbeat
# was not taken, the loop logs and carries on.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() { load agent_helper; reset_agent_test; use_installed_root; }
# What a test started in the background and did not get to stop (it failed first) ends with it.
teardown() { if [[ -f "$BATS_TEST_TMPDIR/pids" ]]; then xargs kill <"$BATS_TEST_TMPDIR/pids" 2>/dev/null || true; fi; }

# timed_agent LIMIT [NAME=value ...] -- args: run_agent, failing when it took more than LIMIT seconds.
timed_agent() {
  local limit="$1" started=$SECONDS
  shift
  run_agent "$@"
  ELAPSED=$((SECONDS - started))
  if ((ELAPSED > limit)); then echo "the agent took ${ELAPSED}s, more than ${limit}s" >&2; return 1; fi
}

# No bash error (unbound variable, syntax, command not found) in the agent's output.
assert_no_crash() {
  if [[ "$output" == *"unbound variable"* || "$output" == *"line "[0-9]*": "* || "$output" == *"command not found"* ]]; then
    echo "$output" >&2
    return 1
  fi
}

@test "a server that is down: --once exits 75 within the connect bound and says so" {
  printf 'http://127.0.0.1:%s\n' "$(node "$FIXTURES/free-port.mjs")" >"$STATE/server_url"
  # A refused connection is answered at once; the bound is the connect timeout (5 s).
  timed_agent 5 -- --once
  [[ "$status" -eq 75 && "$output" == *"did not answer"* ]] || { echo "$status $output" >&2; return 1; }
  assert_no_crash
}

@test "a server that never answers is given up on after HOMEFLEET_CURL_MAX_TIME" {
  control '{"hang":["/api/agent/heartbeat"]}'
  # Given up after 2 s, not at the run's 20 s limit (that would be status 124); the margin is for the
  # agent's own start, which beside the whole suite on two cores once took 3 s.
  timed_agent 10 HOMEFLEET_CURL_MAX_TIME=2 -- --once
  [[ "$status" -eq 75 ]]
  ((ELAPSED >= 2))
  assert_equal "$(request_count /api/agent/heartbeat)" 1
}

@test "every curl has a connect and a total bound, also without the test variables" {
  # An upgrade exercises every request kind.
  record_curl_args
  make_release 1.1.0
  control '{"commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run timeout 20 env -i "PATH=$BATS_TEST_TMPDIR/bin:$TEST_PATH" "TMPDIR=$BATS_TEST_TMPDIR" "FAKE_SYSTEMCTL_LOG=$SYSTEMCTL_LOG" \
    "$BASH_BIN" "$INSTALLED_AGENT" --root "$ROOT_DIR" --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  local n
  n="$(wc -l <"$BATS_TEST_TMPDIR/curl-args")"
  ((n >= 5)) || { cat "$BATS_TEST_TMPDIR/curl-args" >&2; return 1; }
  assert_equal "$(grep -c -- '--connect-timeout 5 --max-time 20 ' "$BATS_TEST_TMPDIR/curl-args")" "$n"
}

@test "garbage answers are logged and ignored: no crash, no command run" {
  local body
  for body in '' 'not json' '<html>502 Bad Gateway</html>' '[1,2,3]' '{"heartbeat_interval_s":"x","commands":"nope"}' \
    '{"commands":[{"type":"upgrade","version":"1.0.0; rm -rf /"}]}' \
    '{"commands":[{"type":"uninstall","operation_id":"../../x","receipt_token":"hfr_0123456789abcdefghijk"}]}' \
    '{"commands":[{"type":"uninstall","operation_id":"op1","receipt_token":"$(touch /tmp/pwned)"}]}' \
    '{"commands":[{"type":"reboot"}]}' '{"commands":[{' '{"heartbeat_interval_s":99999999999999999999}'; do
    control "$(node_e 'console.log(JSON.stringify({heartbeat_body: process.argv[1]}))' "$body")"
    run_agent -- --once
    assert_no_crash
    [[ "$status" -eq 0 || "$status" -eq 75 ]] || { echo "body $body: status $status $output" >&2; return 1; }
    [[ -f "$INSTALLED_AGENT" && -f "$STATE/host_token" ]] || { echo "body $body removed the agent" >&2; return 1; }
  done
  [[ ! -e /tmp/pwned ]]
  assert_equal "$(request_count /api/agent/receipts/op1)" 0
  assert_equal "$(request_count /api/agent/releases/manifest.json)" 0
}

@test "error statuses are logged with what they mean" {
  control '{"heartbeat_status":500,"heartbeat_body":"{}"}'
  run_agent -- --once
  [[ "$status" -eq 75 && "$output" == *"answered 500"* ]]
  control '{"heartbeat_status":403,"heartbeat_body":"{\"error\":\"https required\"}"}'
  run_agent -- --once
  [[ "$status" -eq 75 && "$output" == *"https"* ]]
  control '{"heartbeat_status":429,"heartbeat_body":"{\"error\":\"too many heartbeats from this host\"}"}'
  run_agent -- --once
  [[ "$status" -eq 75 && "$output" == *"slow down (429)"* ]]
  printf 'hfh_revoked-token-0123456789abcdefghij\n' >"$STATE/host_token"
  run_agent -- --once
  [[ "$status" -eq 75 && "$output" == *"refused this host's token (401)"* ]]
  [[ "$output" != *hfh_revoked* ]]
}

@test "the loop survives a dead server and resumes when it is back" {
  local port
  port="$(node "$FIXTURES/free-port.mjs")"
  printf 'http://127.0.0.1:%s\n' "$port" >"$STATE/server_url"
  base_env
  # The loop under strict mode keeps running against a dead server...
  env -i "${BASE_ENV[@]}" "$BASH_BIN" "$INSTALLED_AGENT" --root "$ROOT_DIR" 2>"$BATS_TEST_TMPDIR/agent.log" 3>&- &
  local pid=$!
  echo "$pid" >>"$BATS_TEST_TMPDIR/pids"
  # Two failed rounds (a second apart, quiet); waited for, not slept on: beside the whole suite on
  # two cores, the agent's start alone once took longer than a fixed 3.5 s.
  wait_for '[[ "$(grep -c "did not answer" "$BATS_TEST_TMPDIR/agent.log" || true)" -ge 2 ]]' 30 || { cat "$BATS_TEST_TMPDIR/agent.log" >&2; return 1; }
  kill -0 "$pid"
  kill "$pid"
  wait "$pid" || true
  # ... and a server on that port later gets heartbeats (here: a forwarder to the mock).
  node -e '
    const http = require("http");
    const [port, target] = process.argv.slice(1);
    http.createServer((req, res) => {
      const up = http.request(target + req.url, { method: req.method, headers: req.headers }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
      req.pipe(up);
    }).listen(Number(port), "127.0.0.1");
  ' "$port" "$MOCK" 3>&- &
  local proxy=$!
  echo "$proxy" >>"$BATS_TEST_TMPDIR/pids"
  env -i "${BASE_ENV[@]}" "$BASH_BIN" "$INSTALLED_AGENT" --root "$ROOT_DIR" 2>>"$BATS_TEST_TMPDIR/agent.log" 3>&- &
  pid=$!
  echo "$pid" >>"$BATS_TEST_TMPDIR/pids"
  wait_for '[[ "$(request_count /api/agent/heartbeat)" -ge 1 ]]' 30
  kill "$pid" "$proxy"
  wait "$pid" || true
}

@test "a caller script under set -euo pipefail with an ERR trap survives a dead server" {
  printf 'http://127.0.0.1:%s\n' "$(node "$FIXTURES/free-port.mjs")" >"$STATE/server_url"
  base_env
  run timeout 10 env -i "${BASE_ENV[@]}" "$BASH_BIN" -c \
    "set -Eeuo pipefail; trap 'echo ERR-TRAP' ERR; '$INSTALLED_AGENT' --root '$ROOT_DIR' --once 2>/dev/null || echo \"agent said \$?\"; echo caller-still-running"
  assert_equal "$output" $'agent said 75\ncaller-still-running'
}
