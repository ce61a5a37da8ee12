#!/usr/bin/env bats
# Temporary files of the agent and the installer, which run as root: only inside private folders
# made with mktemp -d, never at a name an attacker can guess and plant a symlink at first.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  VICTIM="$BATS_TEST_TMPDIR/victim"
  printf 'precious\n' >"$VICTIM"
}

# A mktemp that also plays the attacker (who can list /tmp): the moment it makes a name, it plants
# symlinks to $VICTIM at the names one would guess from it. What root writes there lands in $VICTIM.
use_planting_mktemp() {
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  cat >"$BATS_TEST_TMPDIR/bin/mktemp" <<SCRIPT
#!/usr/bin/env bash
made="\$($(command -v mktemp) "\$@")" || exit
for suffix in .body .json .tmp .new .sig .answer .out; do ln -s '$VICTIM' "\$made\$suffix" 2>/dev/null || true; done
printf '%s\n' "\$made"
SCRIPT
  chmod +x "$BATS_TEST_TMPDIR/bin/mktemp"
  TEST_PATH="$BATS_TEST_TMPDIR/bin:$TEST_PATH"
}

assert_victim_untouched() {
  assert_equal "$(cat "$VICTIM")" precious
}

@test "uninstall writes its receipt files in a private folder: a symlink planted beside a temp name is not followed" {
  use_planting_mktemp
  control "{\"receipt_token\":\"$RECEIPT_TOKEN\",\"commands\":[{\"type\":\"uninstall\",\"operation_id\":\"op-7\",\"receipt_token\":\"$RECEIPT_TOKEN\"}]}"
  run_agent -- --once
  [[ "$status" -eq 0 && "$output" == *"confirmed the removal"* ]] || { echo "$status $output" >&2; return 1; }
  assert_victim_untouched
  assert_equal "$(last_request /api/agent/receipts/op-7 r.body)" '{}'
  # The private folder went with the process.
  run find "$BATS_TEST_TMPDIR" -maxdepth 1 -name 'homefleet-*' -type d
  assert_equal "$output" ''
}

@test "the watchdog restores through a private folder: a symlink planted at a fixed name beside the agent is not followed" {
  use_planting_mktemp
  local lib="$ROOT_DIR/usr/local/lib/homefleet-agent"
  cp "$INSTALLED_AGENT" "$INSTALLED_AGENT.previous"
  printf '#!/usr/bin/env bash\nHOMEFLEET_AGENT_VERSION="1.1.0"\nexit 1\n' >"$INSTALLED_AGENT"
  printf 'version=1.1.0\nprevious=1.0.0\nstarted=1\n' >"$STATE/upgrade"
  ln -s "$VICTIM" "$lib/.restore"
  AGENT_UNDER_TEST="$INSTALLED_AGENT.previous" run_agent HOMEFLEET_UPGRADE_TIMEOUT_S=1 -- --watchdog
  [[ "$status" -eq 0 && "$output" == *"previous version restored"* ]] || { echo "$status $output" >&2; return 1; }
  assert_victim_untouched
  [[ -f "$INSTALLED_AGENT" && ! -L "$INSTALLED_AGENT" ]]
  cmp "$INSTALLED_AGENT" "$AGENT"
  run find "$lib" -mindepth 1 -maxdepth 1 -type d -name '.restore.*'
  assert_equal "$output" ''
}

@test "the installer stages the agent in a private folder: symlinks planted at fixed and guessable names are not followed" {
  use_planting_mktemp
  local lib="$ROOT_DIR/usr/local/lib/homefleet-agent"
  ln -s "$VICTIM" "$lib/.host-agent.sh.new"
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_victim_untouched
  [[ -f "$INSTALLED_AGENT" && ! -L "$INSTALLED_AGENT" ]]
  cmp "$INSTALLED_AGENT" "$AGENT"
  run find "$lib" "$BATS_TEST_TMPDIR" -maxdepth 1 -type d -name '.install.*' -o -maxdepth 1 -type d -name 'homefleet-install.*'
  assert_equal "$output" ''
}

@test "an upgrade leaves no temp folder behind, beside the agent or in TMPDIR" {
  make_release 1.1.0
  control '{"commands":[{"type":"upgrade","version":"1.1.0"}]}'
  run_agent "FAKE_SYSTEMCTL_ROOT=$ROOT_DIR" HOMEFLEET_UPGRADE_TIMEOUT_S=10 -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  cmp "$INSTALLED_AGENT" "$MOCK_DIR/releases/1.1.0/host-agent.sh"
  run find "$ROOT_DIR/usr/local/lib/homefleet-agent" -mindepth 1 -maxdepth 1 -name '.*'
  assert_equal "$output" ''
  run find "$BATS_TEST_TMPDIR" -maxdepth 1 -name 'homefleet-*' -type d
  assert_equal "$output" ''
}

teardown() {
  local pidfile
  for pidfile in "$ROOT_DIR"/*.pid; do
    [[ -f "$pidfile" ]] && kill -TERM -- "-$(cat "$pidfile")" 2>/dev/null || true
  done
}
