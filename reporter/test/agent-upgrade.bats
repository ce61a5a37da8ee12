#!/usr/bin/env bats
# The upgrade command: verified manifest and file, previous version kept, a watchdog in its own
# unit that puts the previous version back when the new one never heartbeats.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() { load agent_helper; reset_agent_test; use_installed_root; : >"$SYSTEMCTL_LOG"; }
# Units the fake systemctl started (the watchdog, a restarted agent) are stopped after each test.
teardown() {
  local pidfile
  for pidfile in "$ROOT_DIR"/*.pid; do
    [[ -f "$pidfile" ]] && kill -TERM -- "-$(cat "$pidfile")" 2>/dev/null || true
  done
}

systemctl_stop_agent() {
  env "FAKE_SYSTEMCTL_ROOT=$ROOT_DIR" "$FIXTURES/agent-bin/systemctl" stop homefleet-agent.service
}

upgrade_to() { control "{\"commands\":[{\"type\":\"upgrade\",\"version\":\"$1\"}]}"; }

# The fake systemctl really runs the units under $ROOT_DIR. The watchdog's bound is 10 s unless the
# test sets UPGRADE_TIMEOUT (rollback tests: 2 s).
run_upgrading_agent() {
  run_agent "FAKE_SYSTEMCTL_ROOT=$ROOT_DIR" "HOMEFLEET_UPGRADE_TIMEOUT_S=${UPGRADE_TIMEOUT:-10}" "$@"
}

watchdog_done() { ! kill -0 "$(cat "$ROOT_DIR/homefleet-agent-watchdog.service.pid")" 2>/dev/null; }

assert_not_upgraded() {
  cmp "$INSTALLED_AGENT" "$AGENT"
  [[ ! -e "$INSTALLED_AGENT.previous" && ! -e "$STATE/upgrade" ]]
  run grep -c watchdog "$SYSTEMCTL_LOG"
  assert_equal "$output" 0
}

@test "an upgrade installs the verified version, keeps the previous one and the host token, and the new version heartbeats" {
  make_release 1.1.0
  upgrade_to 1.1.0
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  cmp "$INSTALLED_AGENT" "$MOCK_DIR/releases/1.1.0/host-agent.sh"
  cmp "$INSTALLED_AGENT.previous" "$AGENT"
  assert_equal "$(cat "$STATE/host_token")" "$HOST_TOKEN"
  assert_equal "$(request_count /api/agent/heartbeat)" 2
  assert_equal "$(last_request /api/agent/heartbeat r.json.agent_version)" 1.1.0
  assert_equal "$(last_request /api/agent/heartbeat r.headers.authorization)" "Bearer $HOST_TOKEN"
  grep -qx 'start --no-block homefleet-agent-watchdog.service' "$SYSTEMCTL_LOG"
  # The watchdog saw the new version's heartbeat and stood down without restoring anything.
  wait_for watchdog_done 5
  grep -q 'upgrade done' "$ROOT_DIR/homefleet-agent-watchdog.service.log"
  [[ ! -e "$STATE/upgrade" ]]
  cmp "$INSTALLED_AGENT" "$MOCK_DIR/releases/1.1.0/host-agent.sh"
  run grep -c 'restart' "$SYSTEMCTL_LOG"
  assert_equal "$output" 0
}

@test "the new version's started_at is after the upgrade was offered" {
  make_release 1.1.0
  upgrade_to 1.1.0
  run_upgrading_agent -- --once
  node_e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse)
      .filter((r) => r.path === "/api/agent/heartbeat").map((r) => JSON.parse(r.body));
    if (rows.length !== 2 || rows[0].agent_version !== "1.0.0" || rows[1].agent_version !== "1.1.0") process.exit(1);
    if (!(Date.parse(rows[1].started_at) > Date.parse(rows[0].started_at))) process.exit(1);
  ' "$MOCK_DIR/requests.jsonl"
}

@test "a new version that never heartbeats is rolled back by the watchdog, which restarts the agent" {
  mkdir -p "$MOCK_DIR/releases/1.1.0"
  printf '#!/usr/bin/env bash\nHOMEFLEET_AGENT_VERSION="1.1.0"\necho "broken agent" >&2\nexit 1\n' >"$MOCK_DIR/releases/1.1.0/host-agent.sh"
  upgrade_to 1.1.0
  UPGRADE_TIMEOUT=2 run_upgrading_agent -- --once
  [[ "$status" -eq 1 && "$output" == *"broken agent"* ]] || { echo "$output" >&2; return 1; }
  control '{}'
  # The broken version was installed and ran; after the watchdog's bound the previous version is
  # back and the agent's service was restarted on it.
  [[ "$output" == *"version 1.1.0 installed"* ]]
  wait_for watchdog_done 6
  cmp "$INSTALLED_AGENT" "$AGENT"
  grep -q 'did not heartbeat within 2s; restoring' "$ROOT_DIR/homefleet-agent-watchdog.service.log"
  grep -qx 'restart homefleet-agent.service' "$SYSTEMCTL_LOG"
  [[ ! -e "$STATE/upgrade" ]]
  wait_for '[[ "$(last_request /api/agent/heartbeat r.json.agent_version)" == 1.0.0 && "$(request_count /api/agent/heartbeat)" -ge 2 ]]' 5
  # Offered again right away (the controller has not marked it failed yet), it is not retried.
  systemctl_stop_agent
  upgrade_to 1.1.0
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 && "$output" == *"1.1.0 was rolled back less than 600s ago; not retrying yet"* ]] || { echo "$output" >&2; return 1; }
  cmp "$INSTALLED_AGENT" "$AGENT"
}

@test "the watchdog survives the agent's process being killed" {
  mkdir -p "$MOCK_DIR/releases/1.1.0"
  printf '#!/usr/bin/env bash\nHOMEFLEET_AGENT_VERSION="1.1.0"\nsleep 30\n' >"$MOCK_DIR/releases/1.1.0/host-agent.sh"
  upgrade_to 1.1.0
  base_env
  env -i "${BASE_ENV[@]}" "FAKE_SYSTEMCTL_ROOT=$ROOT_DIR" HOMEFLEET_UPGRADE_TIMEOUT_S=2 "$BASH_BIN" "$INSTALLED_AGENT" --root "$ROOT_DIR" --once 2>/dev/null 3>&- &
  local pid=$!
  wait_for '[[ -f "$ROOT_DIR/homefleet-agent-watchdog.service.pid" ]]'
  control '{}'
  kill -KILL "$pid"
  wait "$pid" || true
  wait_for watchdog_done 6
  cmp "$INSTALLED_AGENT" "$AGENT"
}

@test "a tampered agent file (SHA-256 mismatch) is refused and nothing changes" {
  make_release 1.1.0
  control '{"tamper_agent":true,"commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 && "$output" == *"SHA-256 of version 1.1.0 does not match"* ]] || { echo "$output" >&2; return 1; }
  assert_not_upgraded
}

@test "a tampered manifest (bad signature) is refused before any file is fetched" {
  make_release 1.1.0
  control '{"tamper_manifest":true,"commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 && "$output" == *"signature does not verify"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/releases/1.1.0/host-agent.sh)" 0
  assert_not_upgraded
}

@test "a manifest signed by another key is refused" {
  make_release 1.1.0
  upgrade_to 1.1.0
  openssl genpkey -algorithm ed25519 2>/dev/null | openssl pkey -pubout >"$STATE/manifest_public_key.pem"
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 && "$output" == *"signature does not verify"* ]]
  assert_not_upgraded
}

@test "an expired manifest, a version it does not list, and a file of another version are refused" {
  make_release 1.1.0
  control '{"manifest_expired":true,"commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run_upgrading_agent -- --once
  [[ "$output" == *"expired"* ]]
  assert_not_upgraded
  upgrade_to 1.2.0
  run_upgrading_agent -- --once
  [[ "$output" == *"1.2.0 is not in the verified manifest"* ]]
  assert_not_upgraded
  cp "$AGENT" "$MOCK_DIR/releases/1.1.0/host-agent.sh"
  upgrade_to 1.1.0
  run_upgrading_agent -- --once
  [[ "$output" == *"does not declare version 1.1.0"* ]]
  assert_not_upgraded
}

@test "a version that cannot be upgraded to from this one (upgradable_from) is refused" {
  make_release 1.1.0
  control '{"upgradable_from":"1.0.1","commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 && "$output" == *"needs at least 1.0.1"* ]] || { echo "$output" >&2; return 1; }
  assert_not_upgraded
  control '{"upgradable_from":"1.0.0","commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run_upgrading_agent -- --once
  cmp "$INSTALLED_AGENT" "$MOCK_DIR/releases/1.1.0/host-agent.sh"
}

@test "upgradable_from compares as SemVer: a pre-release of the running version is below it" {
  make_release 1.1.0
  # sort -V put 1.0.0 before 1.0.0-rc.1, so this agent thought itself too old to upgrade.
  control '{"upgradable_from":"1.0.0-rc.1","commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 && "$output" != *"needs at least"* ]] || { echo "$output" >&2; return 1; }
  cmp "$INSTALLED_AGENT" "$MOCK_DIR/releases/1.1.0/host-agent.sh"
}

@test "no upgrade without a watchdog" {
  make_release 1.1.0
  upgrade_to 1.1.0
  run_upgrading_agent FAKE_SYSTEMCTL_FAIL=start -- --once
  [[ "$status" -eq 0 && "$output" == *"watchdog could not be started"* ]]
  cmp "$INSTALLED_AGENT" "$AGENT"
  [[ ! -e "$STATE/upgrade" ]]
}

@test "an upgrade to the running version does nothing" {
  upgrade_to 1.0.0
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 ]]
  assert_equal "$(request_count /api/agent/releases/manifest.json)" 0
  assert_not_upgraded
}

# The manifest and signature the mock serves now, kept aside to be replayed later.
capture_manifest() {
  mkdir -p "$1"
  curl -fsS "$MOCK/api/agent/releases/manifest.json" -o "$1/manifest.json"
  curl -fsS "$MOCK/api/agent/releases/manifest.json.sig" -o "$1/manifest.json.sig"
}

@test "a replayed older signed manifest, still unexpired, is refused: the newest issued_at seen is kept" {
  make_release 1.1.0
  # Signed by the controller's key, listing 1.1.0, issued a day ago and valid for another.
  control '{"issued_at_offset_s":-86400}'
  capture_manifest "$BATS_TEST_TMPDIR/replay"
  # The installer recorded the manifest it installed from (issued when the template was made).
  [[ "$(cat "$STATE/manifest_issued_at")" =~ ^[0-9]+$ ]]
  control "{\"replay\":\"$BATS_TEST_TMPDIR/replay\",\"commands\":[{\"type\":\"upgrade\",\"version\":\"1.1.0\"}]}"
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 && "$output" == *"before the newest one this host has seen: a replayed older manifest; refused"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/releases/1.1.0/host-agent.sh)" 0
  assert_not_upgraded
  # The same upgrade from a current manifest goes ahead.
  upgrade_to 1.1.0
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  cmp "$INSTALLED_AGENT" "$MOCK_DIR/releases/1.1.0/host-agent.sh"
}

@test "the agent remembers the newest manifest it verified, and refuses one issued before it" {
  make_release 1.1.0
  # A verified manifest issued an hour ahead (the upgrade itself stops at the watchdog).
  control '{"issued_at_offset_s":3600,"commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run_upgrading_agent FAKE_SYSTEMCTL_FAIL=start -- --once
  [[ "$output" == *"watchdog could not be started"* ]] || { echo "$output" >&2; return 1; }
  local seen
  seen="$(cat "$STATE/manifest_issued_at")"
  ((seen > $(date -u +%s) + 3000))
  assert_equal "$(stat -c %a "$STATE/manifest_issued_at")" 600
  upgrade_to 1.1.0
  : >"$MOCK_DIR/requests.jsonl"
  run_upgrading_agent -- --once
  [[ "$output" == *"a replayed older manifest; refused"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/releases/1.1.0/host-agent.sh)" 0
  cmp "$INSTALLED_AGENT" "$AGENT"
  assert_equal "$(cat "$STATE/manifest_issued_at")" "$seen"
}

@test "an older version is refused unless the command names it a rollback" {
  make_release 0.9.0
  upgrade_to 0.9.0
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 && "$output" == *"0.9.0 is older than the running 1.0.0 and the command does not name it a rollback; refused"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/releases/manifest.json)" 0
  assert_not_upgraded
  control '{"commands":[{"type":"upgrade","version":"0.9.0","rollback":false}]}'
  run_upgrading_agent -- --once
  assert_not_upgraded
  control '{"commands":[{"type":"upgrade","version":"0.9.0","rollback":true}]}'
  run_upgrading_agent -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  cmp "$INSTALLED_AGENT" "$MOCK_DIR/releases/0.9.0/host-agent.sh"
  assert_equal "$(last_request /api/agent/heartbeat r.json.agent_version)" 0.9.0
}
