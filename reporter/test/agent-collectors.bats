#!/usr/bin/env bats
# host-agent.sh's collectors (PRODUCT.md "Plugins"): metrics, configs, storage and backups, each on
# or off per host, sent in every heartbeat answer; a collector that is off makes none of its calls.
# The fakes log their argument lists: pvesh's guest lists in $PVE/pvesh.log, its storage calls in
# $PVE/pvesh-storage.log, `qm config` / `pct config` in $PVE/config-calls.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  export PVE="$BATS_TEST_TMPDIR/pve"
  mkdir -p "$PVE" "$ROOT_DIR/proc"
  printf 'MemTotal:       16384000 kB\nMemAvailable:    4096000 kB\n' >"$ROOT_DIR/proc/meminfo"
  printf '0.52 0.40 0.33 2/612 12345\n' >"$ROOT_DIR/proc/loadavg"
  printf '[{"vmid":100,"name":"web","status":"running","cpu":0.05,"mem":2147483648,"maxmem":4294967296}]\n' >"$PVE/pvesh-pve1-qemu.json"
  printf '[{"vmid":200,"name":"db","status":"running","type":"lxc","cpu":0.01,"mem":104857600}]\n' >"$PVE/pvesh-pve1-lxc.json"
  printf 'memory: 2048\n' >"$PVE/config-100"
  printf 'arch: amd64\nmemory: 512\n' >"$PVE/config-200"
  cp "$FIXTURES/storage/nodes-storage.json" "$PVE/pvesh-pve1-storage.json"
  cp "$FIXTURES/storage/storage-local-content.json" "$PVE/pvesh-pve1-storage-local-content.json"
}

once() { run_agent "FAKE_PVE_DIR=$PVE" HOMEFLEET_VOLUMES_MIN_S=0 "$@" -- --once; }

# Forgets what the fakes and the mock saw so far.
clear_logs() {
  rm -f "$PVE/pvesh.log" "$PVE/pvesh-storage.log" "$PVE/config-calls"
  : >"$MOCK_DIR/requests.jsonl"
}

# answer_collectors '{"metrics":false,…}': the `collectors` of every heartbeat answer from now on.
answer_collectors() { control "{\"collectors\":$1}"; }

# What the last heartbeat carried of each collector's work, as one line.
heartbeat_shape() {
  last_request /api/agent/heartbeat '[
    "metrics" in r.json,
    r.json.guests.map((g) => [g.vmid, "cpu" in g, "config_sha256" in g].join(":")).join(" "),
    "storages" in r.json,
  ].join(" | ")'
}

calls() { [[ -f "$1" ]] && cat "$1" || true; }

ALL_ON='{"metrics":true,"configs":true,"storage":true,"backups":true}'

@test "with every collector on (the default), a heartbeat makes each collector's calls" {
  answer_collectors "$ALL_ON"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(calls "$PVE/pvesh.log")" $'get /nodes/pve1/qemu --output-format json\nget /nodes/pve1/lxc --output-format json'
  assert_equal "$(calls "$PVE/config-calls")" $'qm config 100\npct config 200'
  grep -qx '/nodes/pve1/storage' "$PVE/pvesh-storage.log"
  assert_equal "$(heartbeat_shape)" 'true | 100:true:true 200:true:true | true'
  (($(request_count /api/agent/guest-configs) == 2))
  (($(request_count /api/agent/storage) >= 1))
}

@test "every collector off: from the next heartbeat on no pvesh storage call, no qm/pct config, no numbers; the guests are still listed" {
  answer_collectors '{"metrics":false,"configs":false,"storage":false,"backups":false}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ "$output" == *'collectors: metrics=off configs=off storage=off backups=off'* ]] || { echo "$output" >&2; return 1; }
  # The answer came after this heartbeat was collected, but what follows it in the same cycle is skipped.
  assert_equal "$(request_count /api/agent/guest-configs)" 0
  assert_equal "$(request_count /api/agent/storage)" 0
  clear_logs

  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(calls "$PVE/pvesh.log")" $'get /nodes/pve1/qemu --output-format json\nget /nodes/pve1/lxc --output-format json'
  assert_equal "$(calls "$PVE/pvesh-storage.log")" ''
  assert_equal "$(calls "$PVE/config-calls")" ''
  assert_equal "$(heartbeat_shape)" 'false | 100:false:false 200:false:false | false'
  assert_equal "$(request_count /api/agent/guest-configs)" 0
  assert_equal "$(request_count /api/agent/storage)" 0
  # Kept in the agent's state folder, private like the rest of it.
  assert_equal "$(cat "$STATE/collectors")" $'metrics=0\nconfigs=0\nstorage=0\nbackups=0'
  assert_equal "$(stat -c %a "$STATE/collectors")" 600
}

@test "each collector is skipped alone, the others still run" {
  answer_collectors '{"metrics":true,"configs":true,"storage":false,"backups":true}'
  once && clear_logs && once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(calls "$PVE/pvesh-storage.log")" ''
  assert_equal "$(calls "$PVE/config-calls")" $'qm config 100\npct config 200'
  assert_equal "$(heartbeat_shape)" 'true | 100:true:true 200:true:true | false'

  answer_collectors '{"metrics":true,"configs":false,"storage":true,"backups":true}'
  once && clear_logs && once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(calls "$PVE/config-calls")" ''
  grep -qx '/nodes/pve1/storage' "$PVE/pvesh-storage.log"
  assert_equal "$(heartbeat_shape)" 'true | 100:true:false 200:true:false | true'
  assert_equal "$(request_count /api/agent/guest-configs)" 0

  answer_collectors '{"metrics":false,"configs":true,"storage":true,"backups":true}'
  once && clear_logs && once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(calls "$PVE/config-calls")" $'qm config 100\npct config 200'
  grep -qx '/nodes/pve1/storage' "$PVE/pvesh-storage.log"
  assert_equal "$(heartbeat_shape)" 'false | 100:false:true 200:false:true | true'
}

@test "a collector turned on again runs from the next heartbeat" {
  answer_collectors '{"metrics":false,"configs":false,"storage":false,"backups":false}'
  once
  answer_collectors "$ALL_ON"
  clear_logs
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  # This heartbeat was collected before the answer turned them on; the uploads after it are not skipped.
  assert_equal "$(calls "$PVE/config-calls")" ''
  clear_logs
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(calls "$PVE/config-calls")" $'qm config 100\npct config 200'
  grep -qx '/nodes/pve1/storage' "$PVE/pvesh-storage.log"
  assert_equal "$(heartbeat_shape)" 'true | 100:true:true 200:true:true | true'
  assert_equal "$(cat "$STATE/collectors")" $'metrics=1\nconfigs=1\nstorage=1\nbackups=1'
}

@test "an answer without collectors (an older controller) changes nothing, and a value that is not a boolean is ignored" {
  answer_collectors '{"metrics":true,"configs":false,"storage":true,"backups":true}'
  once
  control '{}'
  once && clear_logs && once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(calls "$PVE/config-calls")" ''

  answer_collectors '{"configs":"yes","storage":0,"metrics":null}'
  once && clear_logs && once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(calls "$PVE/config-calls")" ''
  assert_equal "$(heartbeat_shape)" 'true | 100:true:false 200:true:false | true'
}

@test "a state file that was tampered with turns nothing on or off that it does not name plainly" {
  printf 'metrics=0\nconfigs=$(touch %s/pwned)\nstorage=yes\nbogus=1\n' "$BATS_TEST_TMPDIR" >"$STATE/collectors"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ ! -e "$BATS_TEST_TMPDIR/pwned" ]]
  assert_equal "$(heartbeat_shape)" 'false | 100:false:true 200:false:true | true'
}

@test "with the storage collector off a download is refused and nothing is run" {
  answer_collectors '{"metrics":true,"configs":true,"storage":false,"backups":true}'
  once
  clear_logs
  control '{"collectors":{"storage":false},"commands":[{"type":"download","operation_id":"dl-1","storage":"local","content":"iso","url":"https://example.org/a.iso","filename":"a.iso"}]}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  wait_for '(( $(request_count /api/agent/operations/dl-1/result) >= 1 ))' 10
  assert_equal "$(last_request /api/agent/operations/dl-1/result 'r.json.exit_code')" 126
  assert_equal "$(calls "$PVE/pvesh-storage.log")" ''
}
