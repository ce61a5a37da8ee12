#!/usr/bin/env bats
# The agent on outputs of real Proxmox VE nodes, as published (fixtures/pve/, each with a .source
# file naming where it was published): guest lists through a fake pvesh, configs through a fake
# qm/pct, and the heartbeat and config upload the agent makes of them.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  export PVE_DIR="$BATS_TEST_TMPDIR/pve" PVE_LOG="$BATS_TEST_TMPDIR/pve.log"
  mkdir -p "$PVE_DIR"
  : >"$PVE_LOG"
}

once() { run_agent "FAKE_PVE_DIR=$PVE_DIR" "FAKE_PVE_LOG=$PVE_LOG" "$@" -- --once; }

@test "every fixture names where it was published" {
  local f
  for f in "$FIXTURES"/pve/*; do
    [[ "$f" == *.source ]] && continue
    [[ -s "$f.source" ]] || { echo "$f has no .source file" >&2; return 1; }
    grep -q -E 'at commit [0-9a-f]{40}' "$f.source" || { echo "$f.source names no commit" >&2; return 1; }
  done
}

@test "PVE 6.2 lists (numbers written as strings, a template) become exact heartbeat guests" {
  cp "$FIXTURES/pve/pve6-qemu.json" "$PVE_DIR/pvesh-pve1-qemu.json"
  cp "$FIXTURES/pve/pve6-lxc.json" "$PVE_DIR/pvesh-pve1-lxc.json"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  local m='"cpu":0.01,"mem":1000,"maxmem":1000,"disk":0,"maxdisk":1000,"uptime_s":1000,"netin":1000,"netout":1000'
  assert_equal "$(last_request /api/agent/heartbeat 'r.json.guests')" "[$(printf '%s,' \
    "{\"vmid\":101,\"name\":\"test-qemu\",\"type\":\"qemu\",\"status\":\"running\",\"template\":false,$m}" \
    "{\"vmid\":102,\"name\":\"test-qemu-windows\",\"type\":\"qemu\",\"status\":\"running\",\"template\":false,$m}" \
    "{\"vmid\":103,\"name\":\"test-qemu-multi-nic\",\"type\":\"qemu\",\"status\":\"running\",\"template\":false,$m}" \
    '{"vmid":9001,"name":"test-qemu-template","type":"qemu","status":"stopped","template":true,"cpu":0,"mem":0,"maxmem":1000,"disk":0,"maxdisk":1000,"uptime_s":0,"netin":0,"netout":0}' \
    '{"vmid":100,"name":"test-lxc","type":"lxc","status":"running","template":false,"cpu":0.01,"mem":1000,"maxmem":1000,"disk":1000,"maxdisk":1000,"uptime_s":1000,"netin":1000,"netout":1000}' \
    | sed 's/,$//')]"
}

@test "an action on a guest of those lists runs with the vmid it listed, and one it did not list is refused" {
  cp "$FIXTURES/pve/pve6-qemu.json" "$PVE_DIR/pvesh-pve1-qemu.json"
  cp "$FIXTURES/pve/pve6-lxc.json" "$PVE_DIR/pvesh-pve1-lxc.json"
  control '{"commands":[
    {"type":"guest.action","operation_id":"p-1","vmid":9001,"guest_type":"qemu","action":"clone","new_vmid":120,"name":"from-template"},
    {"type":"guest.action","operation_id":"p-2","vmid":100,"guest_type":"lxc","action":"reboot"},
    {"type":"guest.action","operation_id":"p-3","vmid":200,"guest_type":"lxc","action":"stop"}]}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(sort "$PVE_LOG")" "$(printf '%s\n' 'pct reboot 100 ' 'qm clone 9001 120 --name from-template ')"
  assert_equal "$(last_request /api/agent/operations/p-3/result '[r.json.exit_code, r.json.output]')" \
    '[126,"refused by the agent: guest 200 is not one this host listed\n"]'
}

# The upload of guest $1's config, as the mock received it.
uploaded_config() { last_request /api/agent/guest-configs "r.json.vmid === $1 ? r.json.text : 'other guest'"; }

# The text of guest $1's config upload, when the heartbeat uploaded several.
config_text() {
  node_e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const up = rows.filter((r) => r.path === "/api/agent/guest-configs").map((r) => JSON.parse(r.body));
    process.stdout.write(up.find((u) => u.vmid === Number(process.argv[2])).text);' "$MOCK_DIR/requests.jsonl" "$1"
}

@test "qm config of a PVE 8 template: cipassword redacted, the URL-encoded sshkeys and everything else sent as printed" {
  cp "$FIXTURES/pve/pve6-qemu.json" "$PVE_DIR/pvesh-pve1-qemu.json"
  printf '[]' >"$PVE_DIR/pvesh-pve1-lxc.json"
  cp "$FIXTURES/pve/qm-config-template.txt" "$PVE_DIR/config-9001"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(uploaded_config 9001)" "$(sed 's/^cipassword: .*/cipassword: **REDACTED**/' "$FIXTURES/pve/qm-config-template.txt")"
  grep -q '^sshkeys: ssh-ed25519%20AAAA.*%0A$' "$FIXTURES/pve/qm-config-template.txt"
  [[ "$(uploaded_config 9001)" == *$'\nsshkeys: ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIKZQPSbEwoDXP42HyE5v4uJ5EC6OpYecPeslMdxQ3KUw%20admin%40jlrickert.me%0A\n'* ]]
  assert_equal "$(last_request /api/agent/heartbeat 'r.json.guests.find((g) => g.vmid === 9001).config_sha256')" \
    "$(last_request /api/agent/guest-configs 'require("crypto").createHash("sha256").update(r.json.text).digest("hex")')"
}

@test "pct config with mount points and raw lxc.* keys is sent as printed" {
  printf '[]' >"$PVE_DIR/pvesh-pve1-qemu.json"
  printf '[{"vmid":101,"name":"Immich","status":"running","type":"lxc"}]' >"$PVE_DIR/pvesh-pve1-lxc.json"
  cp "$FIXTURES/pve/pct-config-mounts.txt" "$PVE_DIR/config-101"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(uploaded_config 101)" "$(cat "$FIXTURES/pve/pct-config-mounts.txt")"
}

@test "qm config of a PVE 9 guest with multi-line notes: the description is sent as printed, one line, its newlines still %0A" {
  # The list is written here (the fixture is the config); the config is published output.
  printf '[{"vmid":990,"name":"haos17-1","status":"running"}]' >"$PVE_DIR/pvesh-pve1-qemu.json"
  printf '[]' >"$PVE_DIR/pvesh-pve1-lxc.json"
  cp "$FIXTURES/pve/qm-config-description.txt" "$PVE_DIR/config-990"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(uploaded_config 990)" "$(cat "$FIXTURES/pve/qm-config-description.txt")"
  # Decoded as Proxmox encoded it, the uploaded description is the guest's 29 lines of notes.
  assert_equal "$(last_request /api/agent/guest-configs '((notes) => [notes.length, notes[0], notes.at(-1)])(decodeURIComponent(
      r.json.text.split("\n").find((l) => l.startsWith("description: ")).slice(13)).split("\n"))')" \
    "[29,\"<div align='center'>\",\"Observer URL http://homeassistant.local:4357\"]"
}

@test "the args: line of a real PVE 9 config, its key=value pairs none of them secret, is sent as written" {
  printf '[{"vmid":100,"name":"3050","status":"running"}]' >"$PVE_DIR/pvesh-pve1-qemu.json"
  printf '[]' >"$PVE_DIR/pvesh-pve1-lxc.json"
  cp "$FIXTURES/pve/qemu-server-args.conf" "$PVE_DIR/config-100"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  grep -q "^args: -cpu 'host,.*hv_vendor_id=1234567890ab' -device qemu-xhci,p2=15" "$FIXTURES/pve/qemu-server-args.conf"
  assert_equal "$(uploaded_config 100)" "$(cat "$FIXTURES/pve/qemu-server-args.conf")"
}

@test "secrets inside values and keys hidden by whitespace are redacted in real configs (lines added to the published outputs)" {
  cp "$FIXTURES/pve/pve6-qemu.json" "$PVE_DIR/pvesh-pve1-qemu.json"
  printf '[{"vmid":101,"name":"Immich","status":"running","type":"lxc"}]' >"$PVE_DIR/pvesh-pve1-lxc.json"
  # The attack review's lines, appended to the real outputs; none of them is published output.
  local real_args
  real_args="$(grep '^args: ' "$FIXTURES/pve/qemu-server-args.conf")"
  { cat "$FIXTURES/pve/qm-config-template.txt"
    # The real args line of qemu-server-args.conf with a SPICE password added to it.
    printf '%s\n' "$real_args -spice port=5900,password=hunter2,addr=127.0.0.1 -object secret,id=sec0,file=/x -object secret,id=sec1,data=hunter5"
    printf '%s\n' ' password: hunter3' $'api_token\r: tok-123' $'vnc_secret\xc2\xa0: s3cr3t' 'ciuser:'
  } >"$PVE_DIR/config-9001"
  { cat "$FIXTURES/pve/pct-config-mounts.txt"
    printf '%s\n' 'lxc.environment: DB_PASSWORD=hunter4 with spaces' 'lxc.environment: TZ=Europe/Berlin' 'lxc.apparmor.profile: unconfined,token=t0k'
  } >"$PVE_DIR/config-101"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  local qemu ct
  qemu="$(config_text 9001)"
  ct="$(config_text 101)"
  assert_equal "$(tail -n 5 <<<"$qemu")" "$(printf '%s\n' \
    "$real_args -spice port=5900,password=**REDACTED**,addr=127.0.0.1 -object secret,id=sec0,file=/x -object secret,id=sec1,data=**REDACTED**" \
    ' password: **REDACTED**' $'api_token\r: **REDACTED**' $'vnc_secret\xc2\xa0: **REDACTED**' 'ciuser:')"
  assert_equal "$(tail -n 3 <<<"$ct")" "$(printf '%s\n' 'lxc.environment: DB_PASSWORD=**REDACTED**' 'lxc.environment: TZ=Europe/Berlin' 'lxc.apparmor.profile: unconfined,token=**REDACTED**')"
  # The published lines are untouched.
  assert_equal "$(head -n 16 <<<"$ct")" "$(cat "$FIXTURES/pve/pct-config-mounts.txt")"
  run grep -c -e hunter2 -e hunter3 -e hunter4 -e hunter5 -e tok-123 -e s3cr3t -e t0k "$MOCK_DIR/requests.jsonl"
  assert_equal "$output" 0
}
