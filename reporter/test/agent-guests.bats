#!/usr/bin/env bats
# host-agent.sh guest control: guest actions run as argument lists it builds itself, only for guests
# it listed, hostile values refused; results reported and retried; agent logs; redacted configs; the
# command poll loop.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  export PVE_LOG="$BATS_TEST_TMPDIR/pve.log" PVE_DIR="$BATS_TEST_TMPDIR/pve"
  mkdir -p "$PVE_DIR"
  : >"$PVE_LOG"
}

# The results the mock received, as "operation exit_code" lines sorted by operation.
results() {
  node_e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const out = rows.filter((r) => /^\/api\/agent\/operations\/[^/]+\/result$/.test(r.path))
      .map((r) => r.path.split("/")[4] + " " + JSON.parse(r.body).exit_code).sort();
    console.log(out.join("\n"));
  ' "$MOCK_DIR/requests.jsonl"
}

once() { run_agent "FAKE_PVE_LOG=$PVE_LOG" "FAKE_PVE_DIR=$PVE_DIR" "$@" -- --once; }

@test "a guest action from the heartbeat answer runs qm with a fixed verb and the vmid, and its result is reported" {
  control '{"commands":[{"type":"guest.action","operation_id":"op-stop","vmid":100,"guest_type":"qemu","action":"stop"}]}'
  printf 'stopping VM 100\n' >"$PVE_DIR/output"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$PVE_LOG")" "qm stop 100 "
  assert_equal "$(last_request /api/agent/operations/op-stop/result '[r.headers.authorization, r.json.exit_code, r.json.output, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(r.json.finished_at)]')" \
    "[\"Bearer $HOST_TOKEN\",0,\"stopping VM 100\\n\",true]"
}

@test "every verb builds its own argument list; containers go to pct; the guest's type is the one this host listed" {
  control '{"commands":[
    {"type":"guest.action","operation_id":"op-1","vmid":100,"guest_type":"qemu","action":"snapshot","name":"pre-upgrade"},
    {"type":"guest.action","operation_id":"op-2","vmid":101,"guest_type":"qemu","action":"rollback","snapshot":"base_2"},
    {"type":"guest.action","operation_id":"op-3","vmid":101,"guest_type":"qemu","action":"clone","new_vmid":300,"name":"web-copy.lan","full":true},
    {"type":"guest.action","operation_id":"op-4","vmid":200,"guest_type":"lxc","action":"clone","new_vmid":301,"name":"db-copy"},
    {"type":"guest.action","operation_id":"op-5","vmid":201,"guest_type":"lxc","action":"destroy"},
    {"type":"guest.action","operation_id":"op-6","vmid":200,"guest_type":"lxc","action":"reboot"},
    {"type":"guest.action","operation_id":"op-7","vmid":100,"guest_type":"qemu","action":"start"},
    {"type":"guest.action","operation_id":"op-8","vmid":100,"guest_type":"qemu","action":"shutdown"}]}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(sort "$PVE_LOG")" "$(printf '%s\n' \
    'pct clone 200 301 --hostname db-copy ' 'pct destroy 201 ' 'pct reboot 200 ' \
    'qm clone 101 300 --name web-copy.lan --full 1 ' 'qm rollback 101 base_2 ' 'qm shutdown 100 ' 'qm snapshot 100 pre-upgrade ' 'qm start 100 ' | sort)"
  assert_equal "$(results)" "$(printf 'op-%s 0\n' 1 2 3 4 5 6 7 8)"
}

@test "hostile names, unlisted guests and unknown verbs are refused (exit 126) and nothing runs" {
  local pwned="$BATS_TEST_TMPDIR/pwned"
  control "$(printf '{"commands":[
    {"type":"guest.action","operation_id":"h-1","vmid":100,"guest_type":"qemu","action":"snapshot","name":"$(touch %s)"},
    {"type":"guest.action","operation_id":"h-2","vmid":100,"guest_type":"qemu","action":"snapshot","name":"a;touch %s"},
    {"type":"guest.action","operation_id":"h-3","vmid":100,"guest_type":"qemu","action":"rollback","snapshot":"x\\"y"},
    {"type":"guest.action","operation_id":"h-4","vmid":100,"guest_type":"qemu","action":"clone","new_vmid":300,"name":"a\\nb"},
    {"type":"guest.action","operation_id":"h-5","vmid":100,"guest_type":"qemu","action":"clone","new_vmid":300,"name":"it'"'"'s"},
    {"type":"guest.action","operation_id":"h-6","vmid":555,"guest_type":"qemu","action":"stop"},
    {"type":"guest.action","operation_id":"h-7","vmid":"100; reboot","guest_type":"qemu","action":"stop"},
    {"type":"guest.action","operation_id":"h-8","vmid":100,"guest_type":"lxc","action":"stop"},
    {"type":"guest.action","operation_id":"h-9","vmid":100,"guest_type":"qemu","action":"migrate"},
    {"type":"guest.action","operation_id":"h-10","vmid":100,"guest_type":"qemu","action":"clone","new_vmid":101,"name":"taken"},
    {"type":"guest.action","operation_id":"../../x","vmid":100,"guest_type":"qemu","action":"stop"}]}' "$pwned" "$pwned")"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ ! -e "$pwned" ]]
  assert_equal "$(cat "$PVE_LOG")" ""
  assert_equal "$(results)" "$(printf 'h-%s 126\n' 1 10 2 3 4 5 6 7 8 9)"
  assert_equal "$(last_request /api/agent/operations/h-6/result r.json.output)" "refused by the agent: guest 555 is not one this host listed"
  assert_equal "$(request_count '/api/agent/operations/../../x/result')" 0
}

@test "commands are read by a JSON parser: braces in a name, an escaped quote in a key and nested objects do not change what runs" {
  control '{"commands":[
    {"type":"guest.action","operation_id":"j-1","vmid":100,"guest_type":"qemu","action":"clone","new_vmid":300,"name":"web {blue}"},
    {"type":"guest.action","operation_id":"j-2","vmid":100,"guest_type":"qemu","x\"action":"destroy","action":"snapshot","name":"pre"},
    {"type":"guest.action","operation_id":"j-3","meta":{"action":"destroy","vmid":101,"operation_id":"j-x"},"vmid":100,"guest_type":"qemu","action":"stop"},
    {"type":"guest.action","operation_id":"j-4","vmid":101,"guest_type":"qemu","action":"rollback","snapshot":"a\"b\\c\nd"}]}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(sort "$PVE_LOG")" "$(printf '%s\n' 'qm snapshot 100 pre ' 'qm stop 100 ')"
  assert_equal "$(results)" "$(printf '%s\n' 'j-1 126' 'j-2 0' 'j-3 0' 'j-4 126')"
  assert_equal "$(last_request /api/agent/operations/j-1/result r.json.output)" "refused by the agent: invalid guest name"
  assert_equal "$(last_request /api/agent/operations/j-4/result r.json.output)" "refused by the agent: invalid snapshot name"
}

@test "a command with a field of the wrong type is refused whole (exit 126, the reason reported) and nothing runs" {
  control '{"commands":[
    {"type":"guest.action","operation_id":"t-1","vmid":"100","guest_type":"qemu","action":"stop"},
    {"type":"guest.action","operation_id":"t-2","vmid":100,"guest_type":"qemu","action":"snapshot","name":["pre"]},
    {"type":"guest.action","operation_id":"t-3","vmid":101,"guest_type":"qemu","action":"clone","new_vmid":300,"name":"copy","full":"yes"},
    {"type":"guest.action","operation_id":"t-4","vmid":100,"guest_type":1,"action":"stop"},
    {"type":"guest.action","operation_id":"t-5","vmid":100.5,"guest_type":"qemu","action":"stop"},
    {"type":"guest.action","operation_id":"t-6","vmid":100,"guest_type":"qemu","action":{"verb":"stop"}}]}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$PVE_LOG")" ""
  assert_equal "$(results)" "$(printf 't-%s 126\n' 1 2 3 4 5 6)"
  assert_equal "$(node_e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    console.log(rows.filter((r) => /\/result$/.test(r.path)).map((r) => r.path.split("/")[4] + ": " + JSON.parse(r.body).output.trim()).sort().join("\n"));
  ' "$MOCK_DIR/requests.jsonl")" "$(printf '%s\n' \
    't-1: refused by the agent: vmid must be a whole number' 't-2: refused by the agent: name must be a string' \
    't-3: refused by the agent: full must be true or false' 't-4: refused by the agent: guest_type must be a string' \
    't-5: refused by the agent: vmid must be a whole number' 't-6: refused by the agent: action must be a string')"
}

@test "an answer that is not JSON is not read at all: nothing of it runs" {
  control '{"heartbeat_body":"{\"heartbeat_interval_s\":1,\"commands\":[{\"type\":\"guest.action\",\"operation_id\":\"c-1\",\"vmid\":100,\"guest_type\":\"qemu\",\"action\":\"destroy\"}"}'
  once
  [[ "$output" == *"the answer is not a JSON object; ignored"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$PVE_LOG")" ""
  assert_equal "$(request_count /api/agent/operations/c-1/result)" 0
}

@test "a failing verb reports its exit code and its output (the server keeps the last 4 KiB)" {
  control '{"commands":[{"type":"guest.action","operation_id":"op-fail","vmid":100,"guest_type":"qemu","action":"reboot"}]}'
  { head -c 70000 /dev/zero | tr '\0' 'x'; printf '\nVM 100 is locked (backup)\n'; } >"$PVE_DIR/output"
  once FAKE_PVE_EXIT=5
  [[ "$status" -eq 0 ]]
  assert_equal "$(last_request /api/agent/operations/op-fail/result '[r.json.exit_code, Buffer.byteLength(r.json.output), r.json.output.endsWith("VM 100 is locked (backup)\n")]')" '[5,65536,true]'
}

@test "a log request answers with the last 200 lines of the agent's own journal" {
  control '{"commands":[{"type":"logs","operation_id":"op-logs"}]}'
  once
  [[ "$status" -eq 0 ]]
  assert_equal "$(cat "$PVE_LOG")" "journalctl -u homefleet-agent.service -n 200 --no-pager -o short-iso "
  assert_equal "$(last_request /api/agent/operations/op-logs/result '[r.json.exit_code, r.json.output.trimEnd().split("\n").length, r.json.output.trimEnd().split("\n").pop()]')" \
    '[0,200,"Nov 22 10:00:00 pve1 homefleet-agent[42]: line 250"]'
}

@test "a log answer over 64 KiB is its last 64 KiB cut at a line: the partial first line is dropped" {
  control '{"commands":[{"type":"logs","operation_id":"op-long-logs"}]}'
  # 200 lines of 500 bytes: 100000 bytes, of which the last 65536 start mid-line.
  once FAKE_JOURNAL_WIDTH=500
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/operations/op-long-logs/result '[r.json.exit_code, Buffer.byteLength(r.json.output), r.json.output.split("\n").slice(0, -1).every((l) => l.length === 499 && l.startsWith("Nov 22 10:00:00 pve1 homefleet-agent[42]: line ")), r.json.output.split("\n").slice(-2)[0].slice(0, 50)]')" \
    '[0,65500,true,"Nov 22 10:00:00 pve1 homefleet-agent[42]: line 250"]'
}

@test "a result the server does not take at first is sent again until it does" {
  control '{"result_failures":2,"commands":[{"type":"guest.action","operation_id":"op-retry","vmid":100,"guest_type":"qemu","action":"start"}]}'
  once
  [[ "$status" -eq 0 ]]
  assert_equal "$(request_count /api/agent/operations/op-retry/result)" 3
}

@test "configs are redacted, hashed into the heartbeat and uploaded; the hash is of exactly the text sent" {
  printf 'boot: order=scsi0\ncipassword: hunter2\napi_token: tok-123\nSecretKey=abc\nciuser: admin\nmemory: 2048\n' >"$PVE_DIR/config-100"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  local text
  text="$(last_request /api/agent/guest-configs 'JSON.stringify([r.json.vmid, r.json.text])')"
  assert_equal "$text" '[100,"boot: order=scsi0\ncipassword: **REDACTED**\napi_token: **REDACTED**\nSecretKey=**REDACTED**\nciuser: admin\nmemory: 2048"]'
  assert_equal "$(last_request /api/agent/guest-configs 'r.json.sha256 === require("crypto").createHash("sha256").update(r.json.text).digest("hex")')" true
  assert_equal "$(last_request /api/agent/heartbeat 'r.json.guests.map((g) => g.config_sha256 ?? null)')" \
    "[\"$(last_request /api/agent/guest-configs r.json.sha256)\",null,null,null]"
  run grep -c -e hunter2 -e tok-123 "$MOCK_DIR/requests.jsonl"
  assert_equal "$output" 0
}

@test "the command loop long-polls beside the heartbeats, runs what it gets, and uploads a config only when it changed" {
  printf 'memory: 2048\n' >"$PVE_DIR/config-100"
  start_agent_loop "FAKE_PVE_LOG=$PVE_LOG" "FAKE_PVE_DIR=$PVE_DIR" HOMEFLEET_POLL_WAIT_S=1
  wait_for '[[ "$(request_count /api/agent/heartbeat)" -ge 2 ]]'
  wait_for '[[ "$(request_count /api/agent/commands?wait=1)" -ge 1 ]]'
  control '{"poll_commands":[{"type":"guest.action","operation_id":"op-poll","vmid":100,"guest_type":"qemu","action":"stop"}]}'
  wait_for '[[ "$(request_count /api/agent/operations/op-poll/result)" -eq 1 ]]' 5
  assert_equal "$(cat "$PVE_LOG")" "qm stop 100 "
  assert_equal "$(request_count /api/agent/guest-configs)" 1
  printf 'memory: 4096\n' >"$PVE_DIR/config-100"
  wait_for '[[ "$(request_count /api/agent/guest-configs)" -eq 2 ]]'
  stop_agent_loop
  assert_equal "$(last_request '/api/agent/commands?wait=1' r.headers.authorization)" "Bearer $HOST_TOKEN"
  # Stopping the agent stops its command loop too.
  local polls
  polls="$(request_count '/api/agent/commands?wait=1')"
  sleep 1.5
  assert_equal "$(request_count '/api/agent/commands?wait=1')" "$polls"
}

@test "qm config runs again only when the guest's config file in /etc/pve changed" {
  mkdir -p "$ROOT_DIR/etc/pve/qemu-server"
  printf 'memory: 2048\n' >"$ROOT_DIR/etc/pve/qemu-server/100.conf"
  printf 'memory: 2048\n' >"$PVE_DIR/config-100"
  start_agent_loop "FAKE_PVE_LOG=$PVE_LOG" "FAKE_PVE_DIR=$PVE_DIR" HOMEFLEET_POLL_WAIT_S=1
  wait_for '[[ "$(request_count /api/agent/heartbeat)" -ge 3 ]]'
  assert_equal "$(grep -c 'qm config 100' "$PVE_DIR/config-calls")" 1
  # What qm prints first, then the file it reads (as on a real host, where qm config reads that file).
  printf 'memory: 16384\n' >"$PVE_DIR/config-100"
  printf 'memory: 16384\n' >"$ROOT_DIR/etc/pve/qemu-server/100.conf"
  wait_for '[[ "$(request_count /api/agent/guest-configs)" -eq 2 ]]'
  stop_agent_loop
  assert_equal "$(last_request /api/agent/guest-configs r.json.text)" "memory: 16384"
  # Guests without a file there (101) are read every time, as before.
  (($(grep -c 'qm config 101' "$PVE_DIR/config-calls") >= 3))
}
