#!/usr/bin/env bats
# host-agent.sh scripts: --allow-scripts kept by the installer in the agent's own state folder and
# reported in heartbeats; a script command's SHA-256 checked, then `<interpreter> -s` with the body on
# stdin, on the host only when allowed, in containers through pct exec, in VMs through qm guest exec;
# hostile fields refused before anything runs; timeout_s enforced.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  export PVE_LOG="$BATS_TEST_TMPDIR/pve.log" PVE_DIR="$BATS_TEST_TMPDIR/pve" PVE_STDIN="$BATS_TEST_TMPDIR/stdin"
  mkdir -p "$PVE_DIR"
  : >"$PVE_LOG"
  MARK="$BATS_TEST_TMPDIR/ran"
}

once() { run_agent "FAKE_PVE_LOG=$PVE_LOG" "FAKE_PVE_DIR=$PVE_DIR" "FAKE_PVE_STDIN=$PVE_STDIN" "$@" -- --once; }

# script_command OPERATION BODY [FIELDS-JSON]: a script command with that body, its true SHA-256,
# interpreter bash and timeout_s 300, FIELDS (a JSON object) over it.
script_command() {
  node_e '
    const [id, body, extra] = process.argv.slice(1);
    const sha256 = require("crypto").createHash("sha256").update(body, "utf8").digest("hex");
    console.log(JSON.stringify({ type: "script", operation_id: id, script_id: 7, sha256, interpreter: "bash", body, timeout_s: 300, ...JSON.parse(extra || "{}") }));
  ' "$1" "$2" "${3:-}"
}

commands() { local IFS=,; control "{\"commands\":[$*]}"; }

result() { last_request "/api/agent/operations/$1/result" "$2"; }

@test "the installer keeps --allow-scripts in the agent's state folder, 0600; heartbeats report allows_scripts; a reinstall without it takes it back" {
  rm -rf "$ROOT_DIR/etc/homefleet-agent" "$ROOT_DIR/usr"
  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR" --allow-scripts
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ "$output" == *"scripts may run on this host itself"* ]]
  assert_equal "$(stat -c %a "$STATE/allow_scripts")" 600
  once
  assert_equal "$(last_request /api/agent/heartbeat r.json.allows_scripts)" true

  run_installer -- --server "$MOCK" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ ! -e "$STATE/allow_scripts" ]]
  once
  assert_equal "$(last_request /api/agent/heartbeat r.json.allows_scripts)" false
}

@test "a script for a container runs pct exec <vmid> -- bash -s with the body on stdin, and its output is the result" {
  local body=$'#!/bin/bash\necho "patched $(hostname)"\napt-get -y upgrade\n'
  printf 'patched ct200\n' >"$PVE_DIR/output"
  commands "$(script_command op-ct "$body" '{"vmid":200}')"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$PVE_LOG")" "pct exec 200 -- bash -s "
  assert_equal "$(cat "$PVE_STDIN")" "--- pct exec 200 -- bash -s "$'\n'"${body%$'\n'}"
  assert_equal "$(result op-ct '[r.json.exit_code, r.json.output]')" '[0,"patched ct200\n"]'
}

@test "in a VM it runs qm guest exec <vmid> --pass-stdin 1 --timeout N -- <interpreter> -s; the guest's exit code and output are the result" {
  cp "$FIXTURES/scripts/qm-guest-exec-result.json" "$PVE_DIR/output"
  commands "$(script_command op-vm 'print("hi")' '{"vmid":100,"interpreter":"python3","timeout_s":90}')"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$PVE_LOG")" "qm guest exec 100 --pass-stdin 1 --timeout 90 -- python3 -s "
  assert_equal "$(tail -n +2 "$PVE_STDIN")" 'print("hi")'
  assert_equal "$(result op-vm '[r.json.exit_code, r.json.output]')" '[3,"Reading package lists...\nupgraded 0\nwarning: apt is not a stable CLI interface\n"]'
}

@test "a VM without a guest agent fails with qm's own message" {
  cp "$FIXTURES/scripts/qm-guest-exec-no-agent.txt" "$PVE_DIR/stderr"
  commands "$(script_command op-noga 'uptime' '{"vmid":101}')"
  once FAKE_PVE_EXIT=255
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(result op-noga '[r.json.exit_code, r.json.output]')" '[255,"No QEMU guest agent configured\n"]'
}

@test "on a host installed without --allow-scripts a host script fails with exactly the spec's message and runs nothing" {
  [[ ! -e "$STATE/allow_scripts" ]]
  commands "$(script_command op-host "touch $MARK")"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ ! -e "$MARK" ]]
  assert_equal "$(cat "$PVE_LOG")" ""
  assert_equal "$(result op-host '[r.json.exit_code, r.json.output]')" '[126,"scripts are not allowed on this host"]'
  assert_equal "$(last_request /api/agent/heartbeat r.json.allows_scripts)" false
}

@test "on a host installed with --allow-scripts the body runs under the interpreter from stdin, in a clean environment" {
  printf 'yes\n' >"$STATE/allow_scripts"
  commands "$(script_command op-host "touch $MARK; echo \"token:\${HOST_TOKEN:-none} \$0\"" '{"interpreter":"sh"}')"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ -e "$MARK" ]]
  assert_equal "$(result op-host '[r.json.exit_code, r.json.output]')" '[0,"token:none sh\n"]'
}

@test "timeout_s is enforced: a script still running is stopped and says so" {
  printf 'yes\n' >"$STATE/allow_scripts"
  commands "$(script_command op-slow 'echo started; sleep 30; echo never' '{"timeout_s":1}')"
  SECONDS=0
  once
  ((SECONDS < 15))
  assert_equal "$(result op-slow '[r.json.exit_code, r.json.output]')" '[124,"started\n\nhomefleet-agent: the script did not finish within 1s\n"]'
}

@test "a body that does not match its SHA-256, and hostile or mistyped fields, are refused (126) and nothing runs" {
  local good bad
  printf 'yes\n' >"$STATE/allow_scripts"
  good="$(script_command x "touch $MARK")"
  bad="$(node_e 'const c = JSON.parse(process.argv[1]); c.sha256 = "0".repeat(64); console.log(JSON.stringify(c))' "$good")"
  commands \
    "${bad/\"x\"/\"r-1\"}" \
    "$(script_command r-2 "touch $MARK" '{"vmid":555}')" \
    "$(script_command r-3 "touch $MARK" '{"vmid":"200; touch /tmp/x"}')" \
    "$(script_command r-4 "touch $MARK" '{"interpreter":"bash -c touch"}')" \
    "$(script_command r-5 "touch $MARK" '{"interpreter":"perl"}')" \
    "$(script_command r-6 "touch $MARK" '{"timeout_s":0}')" \
    "$(script_command r-7 "touch $MARK" '{"timeout_s":3601}')" \
    "$(script_command r-8 "touch $MARK" '{"body":["touch"]}')" \
    "$(script_command r-9 "touch $MARK" '{"sha256":"$(touch /tmp/x)"}')"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ ! -e "$MARK" ]]
  assert_equal "$(cat "$PVE_LOG")" ""
  local i
  for i in 1 2 3 4 5 6 7 8 9; do assert_equal "$(result "r-$i" r.json.exit_code)" 126; done
  [[ "$(result r-1 r.json.output)" == "refused by the agent: the body does not match its SHA-256"* ]]
  assert_equal "$(result r-2 r.json.output)" "refused by the agent: guest 555 is not one this host listed"
  assert_equal "$(result r-5 r.json.output)" "refused by the agent: unknown interpreter"
  assert_equal "$(result r-8 r.json.output)" "refused by the agent: body must be a string"
}
