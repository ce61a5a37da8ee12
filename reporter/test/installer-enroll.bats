#!/usr/bin/env bats
# install-agent.sh: enrolls, verifies the signed manifest and the agent's SHA-256, installs.

setup_file() { load agent_helper; start_agent_mock; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() { load agent_helper; reset_agent_test; }

@test "enrolls with the hfe_ token, the machine id, the host name and the manifest's agent version" {
  install_ok
  assert_equal "$(request_count /api/agent/enroll)" 1
  assert_equal "$(last_request /api/agent/enroll r.headers.authorization)" "Bearer $ENROLL_TOKEN"
  assert_equal "$(last_request /api/agent/enroll 'r.json')" \
    '{"hostname":"pve1","machine_id":"0123456789abcdef0123456789abcdef","agent_version":"1.0.0"}'
  assert_equal "$(last_request /api/agent/enroll 'r.headers["content-type"]')" application/json
}

@test "installs the verified agent, the units and root-only state" {
  install_ok
  cmp "$INSTALLED_AGENT" "$AGENT"
  assert_equal "$(stat -c %a "$INSTALLED_AGENT")" 755
  assert_equal "$(stat -c %a "$STATE")" 700
  for f in server_url host_token manifest_public_key.pem; do
    assert_equal "$(stat -c %a "$STATE/$f")" 600
  done
  assert_equal "$(cat "$STATE/server_url")" "$MOCK"
  assert_equal "$(cat "$STATE/host_token")" "$HOST_TOKEN"
  cmp "$STATE/manifest_public_key.pem" "$MOCK_DIR/manifest_public_key.pem"
  [[ ! -e "$STATE/tls_pin" ]]
  grep -qx "ExecStart=$INSTALLED_AGENT --root $ROOT_DIR" "$ROOT_DIR/etc/systemd/system/homefleet-agent.service"
  grep -qx "ExecStart=$INSTALLED_AGENT.previous --watchdog --root $ROOT_DIR" "$ROOT_DIR/etc/systemd/system/homefleet-agent-watchdog.service"
  assert_equal "$(cat "$SYSTEMCTL_LOG")" $'daemon-reload\nenable --now homefleet-agent.service'
}

@test "the installed agent heartbeats with the host token it was given" {
  install_ok
  run_agent -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/heartbeat r.headers.authorization)" "Bearer $HOST_TOKEN"
}

@test "piped into bash as the install command does (curl ... | bash -s -- --token ...), it installs" {
  # A systemctl that swallows its stdin would eat the rest of a piped script.
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  printf '#!/usr/bin/env bash\ncat >/dev/null\nexec "%s/agent-bin/systemctl" "$@"\n' "$FIXTURES" >"$BATS_TEST_TMPDIR/bin/systemctl"
  chmod +x "$BATS_TEST_TMPDIR/bin/systemctl"
  TEST_PATH="$BATS_TEST_TMPDIR/bin:$TEST_PATH"
  base_env
  run timeout "$RUN_LIMIT" env -i "${BASE_ENV[@]}" "$BASH_BIN" -c \
    "cat '$INSTALLER' | '$BASH_BIN' -s -- --server '$MOCK' --token '$ENROLL_TOKEN' --root '$ROOT_DIR'"
  [[ "$status" -eq 0 && "$output" == *"installed agent 1.0.0 as pve1"* ]] || { echo "$output" >&2; return 1; }
  cmp "$INSTALLED_AGENT" "$AGENT"
  assert_equal "$(cat "$SYSTEMCTL_LOG")" $'daemon-reload\nenable --now homefleet-agent.service'
}

@test "the newest version of the manifest is installed" {
  make_release 1.10.0
  make_release 1.9.0
  install_ok
  assert_equal "$(last_request /api/agent/enroll r.json.agent_version)" 1.10.0
  grep -qx 'HOMEFLEET_AGENT_VERSION="1.10.0"' "$INSTALLED_AGENT"
}

@test "a new host follows the stable channel: a newer pre-release in the manifest is not installed" {
  make_release 1.10.0
  make_release 1.11.0-beta.1
  make_release 1.9.0
  install_ok
  assert_equal "$(last_request /api/agent/enroll r.json.agent_version)" 1.10.0
  grep -qx 'HOMEFLEET_AGENT_VERSION="1.10.0"' "$INSTALLED_AGENT"
}

@test "when only pre-releases ship, the newest of them is installed" {
  rm -rf "$MOCK_DIR/releases"
  make_release 2.0.0-rc.1
  make_release 2.0.0-rc.2
  make_release 2.0.0-beta.9
  install_ok
  assert_equal "$(last_request /api/agent/enroll r.json.agent_version)" 2.0.0-rc.2
}

@test "a wrong enrollment token is refused: nothing installed, a clear message, no token echoed" {
  run_installer -- --server "$MOCK" --token hfe_wrong-token-0123456789abcdefghij --root "$ROOT_DIR"
  [[ "$status" -eq 1 ]]
  [[ "$output" == *"enrollment token was refused"* ]]
  [[ "$output" != *hfe_wrong* ]]
  [[ ! -e "$ROOT_DIR/etc/homefleet-agent" && ! -e "$INSTALLED_AGENT" && ! -e "$ROOT_DIR/etc/systemd" ]]
  [[ ! -s "$SYSTEMCTL_LOG" ]]
}

@test "a machine id that is already enrolled (409) says so and installs nothing" {
  control '{"enroll_status":409}'
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"already enrolled"* ]]
  [[ ! -e "$INSTALLED_AGENT" ]]
}

@test "a tampered manifest (bad signature) is refused and nothing is installed" {
  control '{"tamper_manifest":true}'
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"signature does not verify"* ]] || { echo "$output" >&2; return 1; }
  [[ ! -e "$ROOT_DIR/etc/homefleet-agent" && ! -e "$INSTALLED_AGENT" ]]
  [[ ! -s "$SYSTEMCTL_LOG" ]]
}

@test "a manifest signed by another key than the enrollment's is refused" {
  control '{"enroll_other_key":true}'
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"signature does not verify"* ]]
  [[ ! -e "$INSTALLED_AGENT" ]]
}

@test "an expired manifest is refused" {
  control '{"manifest_expired":true}'
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"expired"* ]]
  [[ ! -e "$INSTALLED_AGENT" ]]
}

@test "a tampered agent file (SHA-256 mismatch) is refused and nothing is installed" {
  control '{"tamper_agent":true}'
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"SHA-256 of version 1.0.0 does not match"* ]] || { echo "$output" >&2; return 1; }
  [[ ! -e "$ROOT_DIR/etc/homefleet-agent" && ! -e "$INSTALLED_AGENT" ]]
}

@test "installing again enrolls again and rotates the host token, then restarts the agent" {
  install_ok
  : >"$SYSTEMCTL_LOG"
  control '{"host_token":"hfh_rotated-host-token-0123456789abcdef"}'
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 0 && "$output" == *"enrolling again"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/enroll)" 2
  assert_equal "$(cat "$STATE/host_token")" hfh_rotated-host-token-0123456789abcdef
  assert_equal "$(stat -c %a "$STATE/host_token")" 600
  assert_equal "$(cat "$SYSTEMCTL_LOG")" $'daemon-reload\nenable --now homefleet-agent.service\nrestart homefleet-agent.service'
  run_agent -- --once
  [[ "$status" -eq 0 ]]
  assert_equal "$(last_request /api/agent/heartbeat r.headers.authorization)" "Bearer hfh_rotated-host-token-0123456789abcdef"
}

@test "installing again on a machine the server refuses (409) leaves the installation as it was" {
  install_ok
  : >"$SYSTEMCTL_LOG"
  control '{"enroll_status":409}'
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"already enrolled"* ]]
  assert_equal "$(cat "$STATE/host_token")" "$HOST_TOKEN"
  cmp "$INSTALLED_AGENT" "$AGENT"
  [[ ! -s "$SYSTEMCTL_LOG" ]]
}

@test "installing again refuses a replayed manifest issued before the one this host installed from, before enrolling" {
  install_ok
  [[ "$(cat "$STATE/manifest_issued_at")" =~ ^[0-9]+$ ]]
  assert_equal "$(stat -c %a "$STATE/manifest_issued_at")" 600
  : >"$SYSTEMCTL_LOG"
  : >"$MOCK_DIR/requests.jsonl"
  control '{"issued_at_offset_s":-86400,"host_token":"hfh_rotated-host-token-0123456789abcdef"}'
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"a replayed older manifest; nothing changed"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/enroll)" 0
  assert_equal "$(cat "$STATE/host_token")" "$HOST_TOKEN"
  cmp "$INSTALLED_AGENT" "$AGENT"
  [[ ! -s "$SYSTEMCTL_LOG" ]]
}

@test "installing again does not downgrade the installed agent" {
  install_ok
  rm -rf "$MOCK_DIR/releases/1.0.0"
  make_release 0.9.0
  : >"$MOCK_DIR/requests.jsonl"
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"newest agent (0.9.0) is older than the installed one (1.0.0): not downgrading"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/enroll)" 0
  cmp "$INSTALLED_AGENT" "$AGENT"
  # A fresh install (after --uninstall) takes what the controller ships.
  run_installer -- --uninstall --root "$ROOT_DIR"
  install_ok
  grep -qx 'HOMEFLEET_AGENT_VERSION="0.9.0"' "$INSTALLED_AGENT"
}

@test "arguments are checked before anything is sent" {
  run_installer -- --server "$MOCK" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"--token"* ]]
  run_installer -- --server "$MOCK" --token hfh_not-an-enrollment-token-0123456789 --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"enrollment token (hfe_"* ]]
  run_installer -- --server 'ftp://example' --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"http(s) URL"* ]]
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --fingerprint 'AA:BB' --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"fingerprint"* ]]
  rm "$ROOT_DIR/etc/machine-id"
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"machine id"* ]]
  assert_equal "$(request_count)" 0
}

@test "the served default server is used when --server is not given" {
  sed "s|^HOMEFLEET_SERVER_DEFAULT=\"\"\$|HOMEFLEET_SERVER_DEFAULT=\"$MOCK\"|" "$INSTALLER" >"$BATS_TEST_TMPDIR/served.sh"
  run ! cmp -s "$INSTALLER" "$BATS_TEST_TMPDIR/served.sh"
  INSTALLER="$BATS_TEST_TMPDIR/served.sh"
  run_installer -- --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$STATE/server_url")" "$MOCK"
}

@test "a failing systemctl fails the install with its name" {
  run_installer FAKE_SYSTEMCTL_FAIL=enable -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"enable --now homefleet-agent.service failed"* ]]
}

@test "--uninstall stops the service and removes everything the installer put there" {
  install_ok
  : >"$SYSTEMCTL_LOG"
  run_installer -- --uninstall --root "$ROOT_DIR"
  [[ "$status" -eq 0 ]]
  assert_equal "$(cd "$ROOT_DIR" && find . -mindepth 1 | sort | tr '\n' ' ')" './etc ./etc/hostname ./etc/machine-id ./etc/systemd ./etc/systemd/system ./usr ./usr/local ./usr/local/lib '
  assert_equal "$(cat "$SYSTEMCTL_LOG")" $'disable --now homefleet-agent.service\nstop homefleet-agent-watchdog.service\ndaemon-reload'
}
