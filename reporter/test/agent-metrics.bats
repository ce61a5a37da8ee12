#!/usr/bin/env bats
# host-agent.sh metrics: the host's numbers from <root>/proc and df, each guest's from pvesh.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  export PVE="$BATS_TEST_TMPDIR/pve"
  mkdir -p "$PVE" "$ROOT_DIR/proc/net"
  printf 'MemTotal:       16384000 kB\nMemFree:         1000000 kB\nMemAvailable:    4096000 kB\nBuffers:          100000 kB\n' >"$ROOT_DIR/proc/meminfo"
  printf '0.52 0.40 0.33 2/612 12345\n' >"$ROOT_DIR/proc/loadavg"
  cat >"$ROOT_DIR/proc/net/dev" <<'DEV'
Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 999999     100    0    0    0     0          0         0   999999     100    0    0    0     0       0          0
  eno1: 1000000    2000    0    0    0     0          0         0  3000000    4000    0    0    0     0       0          0
 vmbr0: 500000     1000    0    0    0     0          0         0   700000     900    0    0    0     0       0          0
tap100i0: 77777      10    0    0    0     0          0         0    88888      10    0    0    0     0       0          0
veth200i0: 66666     10    0    0    0     0          0         0    55555      10    0    0    0     0       0          0
fwbr100i0: 44444     10    0    0    0     0          0         0    33333      10    0    0    0     0       0          0
DEV
  printf 'cpu  1000 0 1000 8000 0 0 0 0 0 0\ncpu0 500 0 500 4000 0 0 0 0 0 0\n' >"$ROOT_DIR/proc/stat"
}

@test "--once sends the host's memory, root disk, load and network counters (no CPU: one reading is not a rate)" {
  run_agent "FAKE_PVE_DIR=$PVE" -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/heartbeat '[Object.keys(r.json.metrics), r.json.metrics.mem_used, r.json.metrics.mem_total, r.json.metrics.load1, r.json.metrics.net_rx_bytes, r.json.metrics.net_tx_bytes]')" \
    "[[\"mem_used\",\"mem_total\",\"disk_used\",\"disk_total\",\"load1\",\"net_rx_bytes\",\"net_tx_bytes\"],$(((16384000 - 4096000) * 1024)),$((16384000 * 1024)),0.52,1500000,3700000]"
  # The root filesystem as df sees it for <root>.
  local used total
  read -r total used < <(df -P -B1 "$ROOT_DIR/" | tail -n 1 | awk '{print $2, $3}')
  assert_equal "$(last_request /api/agent/heartbeat '[r.json.metrics.disk_used <= r.json.metrics.disk_total, r.json.metrics.disk_total]')" "[true,$total]"
  ((used >= 0))
}

@test "CPU use is measured between two heartbeats from /proc/stat" {
  start_agent_loop "FAKE_PVE_DIR=$PVE"
  wait_for '(( $(request_count /api/agent/heartbeat) >= 1 ))' 10 || { stop_agent_loop; return 1; }
  # 1000 more jiffies: 250 user, 50 system, 600 idle, 100 iowait: 30 % busy.
  printf 'cpu  1250 0 1050 8600 100 0 0 0 0 0\n' >"$ROOT_DIR/proc/stat"
  wait_for '(( $(request_count /api/agent/heartbeat) >= 2 ))' 10 || { stop_agent_loop; return 1; }
  stop_agent_loop
  assert_equal "$(node_e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse).filter((r) => r.path === "/api/agent/heartbeat");
    console.log(JSON.stringify(rows.slice(0, 2).map((r) => JSON.parse(r.body).metrics.cpu)));
  ' "$MOCK_DIR/requests.jsonl")" '[null,0.3]'
}

@test "each guest carries its numbers from pvesh get /nodes/<node>/qemu|lxc --output-format json" {
  cat >"$PVE/pvesh-pve1-qemu.json" <<'JSON'
[{"cpu":0.0523,"disk":0,"diskread":123,"maxdisk":34359738368,"maxmem":4294967296,"mem":2147483648,"name":"web","netin":123456,"netout":654321,"pid":1234,"status":"running","tags":"prod;web","uptime":86400,"vmid":100},
 {"cpu":1.02,"maxmem":8589934592,"mem":"lots","name":"build-runner","status":"stopped","uptime":0,"vmid":101,"cpus":4}]
JSON
  printf '[{"vmid":"200","name":"db","status":"running","cpu":1.5e-05,"mem":104857600,"maxmem":536870912,"disk":1073741824,"maxdisk":8589934592,"uptime":3600,"netin":10,"netout":20,"type":"lxc"}]\n' >"$PVE/pvesh-pve1-lxc.json"
  run_agent "FAKE_PVE_DIR=$PVE" -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$PVE/pvesh.log")" $'get /nodes/pve1/qemu --output-format json\nget /nodes/pve1/lxc --output-format json'
  assert_equal "$(last_request /api/agent/heartbeat 'r.json.guests')" \
    '[{"vmid":100,"name":"web","type":"qemu","status":"running","template":false,"cpu":0.0523,"mem":2147483648,"maxmem":4294967296,"disk":0,"maxdisk":34359738368,"uptime_s":86400,"netin":123456,"netout":654321},{"vmid":101,"name":"build-runner","type":"qemu","status":"stopped","template":false,"cpu":1,"maxmem":8589934592,"uptime_s":0},{"vmid":200,"name":"db","type":"lxc","status":"running","template":false,"cpu":0.000015,"mem":104857600,"maxmem":536870912,"disk":1073741824,"maxdisk":8589934592,"uptime_s":3600,"netin":10,"netout":20}]'
}

@test "numbers that are not what they should be are left out, and a list that is not JSON adds no guests" {
  printf 'Error: {"vmid":100,"cpu":"0.5\\"}],"x":{' >"$PVE/pvesh-pve1-qemu.json"
  printf '[{"vmid":200,"cpu":-1,"mem":1e999999,"maxmem":"lots","disk":true,"netin":"12"}]' >"$PVE/pvesh-pve1-lxc.json"
  run_agent "FAKE_PVE_DIR=$PVE" -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/heartbeat 'r.json.guests')" '[{"vmid":200,"name":"","type":"lxc","status":"","template":false,"netin":12}]'
}

@test "a guest's CPU share written with an exponent is kept as it is; only a share of 1 or more becomes 1" {
  printf '[{"vmid":100,"cpu":1.5e-05},{"vmid":101,"cpu":15e-1}]\n' >"$PVE/pvesh-pve1-qemu.json"
  printf '[{"vmid":200,"cpu":9e-4}]\n' >"$PVE/pvesh-pve1-lxc.json"
  run_agent "FAKE_PVE_DIR=$PVE" -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/heartbeat 'r.json.guests.map((g) => g.cpu)')" '[0.000015,1,0.0009]'
}
