#!/usr/bin/env bats
# host-agent.sh and the node's backups (PRODUCT.md "Fleet health: policies across every source"): the
# cluster's backup jobs (`pvesh get /cluster/backup`) and the backups on the storages that hold them
# (`pvesh get .../content --content backup`) sent to POST /api/agent/backups when they change, from
# published outputs of real nodes (fixtures/backups/, each with its .source). The fake pvesh records
# each backup call in $PVE_DIR/pvesh-backup.log and each storage call in $PVE_DIR/pvesh-storage.log.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  export PVE_DIR="$BATS_TEST_TMPDIR/pve"
  mkdir -p "$PVE_DIR"
  cp "$FIXTURES/storage/nodes-storage.json" "$PVE_DIR/pvesh-pve1-storage.json"
  cp "$FIXTURES/storage/storage-local-content.json" "$PVE_DIR/pvesh-pve1-storage-local-content.json"
  # `local` holds content backup too, with no backups on it.
  echo '[]' >"$PVE_DIR/pvesh-pve1-storage-local-content-backup.json"
  cp "$FIXTURES/backups/storage-backup-content.json" "$PVE_DIR/pvesh-pve1-storage-truenas-backups-content.json"
  cp "$FIXTURES/backups/cluster-backup.json" "$PVE_DIR/pvesh-cluster-backup.json"
  echo '{"comment":"nightly","members":[{"id":"qemu/100","node":"pve1","type":"qemu","vmid":100},{"id":"lxc/105","node":"pve2","type":"lxc","vmid":"105"},{"id":"storage/pve1/local","node":"pve1","type":"storage","storage":"local"}]}' \
    >"$PVE_DIR/pvesh-pool-backup-24h.json"
}
teardown() { if [[ -n "${AGENT_PID:-}" ]]; then kill -TERM "$AGENT_PID" 2>/dev/null || true; fi; }

once() { run_agent "FAKE_PVE_DIR=$PVE_DIR" "$@" -- --once; }
backup_calls() { [[ -f "$PVE_DIR/pvesh-backup.log" ]] && cat "$PVE_DIR/pvesh-backup.log"; }
content_calls() { [[ -f "$PVE_DIR/pvesh-storage.log" ]] && awk 'BEGIN { RS = ""; FS = "\n" } /--content/ { $1 = $1; print }' "$PVE_DIR/pvesh-storage.log"; }

# Edits a JSON file the fake prints: a node expression over `doc`.
edit_json() {
  node_e 'const fs = require("fs"); const f = process.argv[1]; const doc = JSON.parse(fs.readFileSync(f, "utf8"));
    new Function("doc", process.argv[2])(doc); fs.writeFileSync(f, JSON.stringify(doc));' "$1" "$2"
}

@test "every backups fixture names where it was published, and an adapted one says so" {
  local f
  for f in "$FIXTURES"/backups/*; do
    [[ "$f" == *.source || "$f" == */README.md ]] && continue
    [[ -s "$f.source" ]] || { echo "$f has no .source file" >&2; return 1; }
    grep -q -E 'https://[^ ]+' "$f.source" || { echo "$f.source names no address" >&2; return 1; }
    grep -q -E 'commit [0-9a-f]{40}|[0-9]{4}-[0-9]{2}-[0-9]{2}|no date on the page' "$f.source" || { echo "$f.source names no commit or date" >&2; return 1; }
    grep -q '^ADAPTED' "$f.source"
  done
}

@test "the jobs of this node and the newest backups go to POST /api/agent/backups: pools resolved, 'all' with exclude, verification read" {
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/backups)" 1
  # The disabled job is bound to node pve-1, not this one (pve1): left out.
  assert_equal "$(last_request /api/agent/backups 'JSON.stringify(r.json.jobs)')" "$(printf '[%s,%s]' \
    '{"id":"a44de41ac2062aca2fcf6c9d3157519f21075123:1","enabled":true,"schedule":"21:04","vmids":[100,105],"exclude":[],"storage":"pve-backup"}' \
    '{"id":"backup-2c1f8a9e-5d3b","enabled":true,"schedule":"02:30","vmids":"all","exclude":[178,194,195,252,260,267],"storage":"local-backup-dir"}')"
  assert_equal "$(last_request /api/agent/backups 'r.json.backups.map((b) => [b.vmid, b.volid.split("/")[1], b.ctime, b.size, b.storage, b.protected, b.verified].join(" ")).join("\n")')" "$(printf '%s\n' \
    '104 vzdump-lxc-104-2026_08_16-02_16_19.tar.zst 1786864579 1273148176 truenas-backups false ok' \
    '104 vzdump-lxc-104-2026_08_23-02_11_42.tar.zst 1787469102 1273880991 truenas-backups false failed' \
    '105 vzdump-lxc-105-2026_07_05-01_05_14.tar.zst 1783231514 860517483 truenas-backups false ' \
    '105 vzdump-lxc-105-2026_07_26-02_00_06.tar.zst 1785049206 9811196584 truenas-backups false ')"
  assert_equal "$(last_request /api/agent/backups 'r.json.backups.filter((b) => b.verified === null).length')" 2
  # Only the active storages that hold content backup were listed, with --content backup.
  assert_equal "$(content_calls)" "$(printf '%s\n' \
    'get /nodes/pve1/storage/local/content --content backup --output-format json' \
    'get /nodes/pve1/storage/truenas-backups/content --content backup --output-format json')"
  assert_equal "$(backup_calls)" "$(printf '%s\n' 'get /cluster/backup --output-format json' 'get /pools/backup-24h --output-format json')"
}

@test "a disabled job of this node is reported as disabled; old jobs' dow and starttime make their schedule" {
  edit_json "$PVE_DIR/pvesh-cluster-backup.json" 'doc[0].node = "pve1"; delete doc[2].schedule; doc[2].dow = "mon,tue"; doc[2].starttime = "02:30";'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/backups 'r.json.jobs.map((j) => [j.id, j.enabled, JSON.stringify(j.vmids), j.schedule].join(" ")).join("\n")')" "$(printf '%s\n' \
    '6e3db65d0e925f0314fbbdadf9c8808801be0c85:2 false [102] fri 09:00' \
    'a44de41ac2062aca2fcf6c9d3157519f21075123:1 true [100,105] 21:04' \
    'backup-2c1f8a9e-5d3b true "all" mon,tue 02:30')"
}

@test "with collectors.backups off in the heartbeat answer nothing is listed or sent" {
  control '{"heartbeat_body":"{\"heartbeat_interval_s\":1,\"commands\":[],\"collectors\":{\"metrics\":true,\"configs\":true,\"storage\":true,\"backups\":false}}"}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/backups)" 0
  run ! backup_calls
  assert_equal "$(content_calls)" ''
}

@test "the same report is sent once; one the server refused is sent again" {
  control '{"backups_failures":1}'
  start_agent_loop "FAKE_PVE_DIR=$PVE_DIR" HOMEFLEET_POLL_WAIT_S=1 HOMEFLEET_BACKUPS_MIN_S=0
  wait_for '(($(request_count /api/agent/heartbeat) >= 4))' 20
  stop_agent_loop
  assert_equal "$(request_count /api/agent/backups)" 2
  (($(grep -c /cluster/backup "$PVE_DIR/pvesh-backup.log") >= 3))
}

@test "jobs or backups pvesh cannot give are not reported at all, never half" {
  rm "$PVE_DIR/pvesh-cluster-backup.json"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/backups)" 0
  [[ "$output" == *'backups: pvesh get /cluster/backup did not print a JSON list; backups are not reported'* ]]

  cp "$FIXTURES/backups/cluster-backup.json" "$PVE_DIR/pvesh-cluster-backup.json"
  echo '{"not":"a list"' >"$PVE_DIR/pvesh-pve1-storage-truenas-backups-content.json"
  once
  assert_equal "$(request_count /api/agent/backups)" 0
  [[ "$output" == *'backups: the backups on storage truenas-backups could not be listed; backups are not reported'* ]]

  cp "$FIXTURES/backups/storage-backup-content.json" "$PVE_DIR/pvesh-pve1-storage-truenas-backups-content.json"
  rm "$PVE_DIR/pvesh-pool-backup-24h.json"
  once
  assert_equal "$(request_count /api/agent/backups)" 0
  [[ "$output" == *'backups: the guests of pool backup-24h (job a44de41ac2062aca2fcf6c9d3157519f21075123:1) could not be listed; backups are not reported'* ]]
}

@test "the newest 10 backups of each guest, one entry per volume, PVE 6 strings read, unreadable entries left out" {
  # Twelve backups of 300 (the newest listed twice), a host backup, a name the controller refuses, a
  # volume of another storage, an ISO and a PBS snapshot never verified.
  node_e '
    const out = [];
    for (let i = 0; i < 12; i++) out.push({ content: "backup", ctime: String(1786000000 + i * 86400), format: "vma.zst", size: String(1000 + i), subtype: "qemu", vmid: "300", volid: `truenas-backups:backup/vzdump-qemu-300-day${String(i).padStart(2, "0")}.vma.zst`, protected: i === 11 ? 1 : undefined });
    out.push(out[11]);
    out.push({ content: "backup", ctime: 1786000000, format: "pbs-ct", size: 1, volid: "truenas-backups:backup/host/pve1/2026-08-01T00:00:00Z" });
    out.push({ content: "backup", ctime: 1786000000, format: "vma.zst", size: 1, vmid: 301, volid: "truenas-backups:backup/vzdump qemu 301.vma.zst" });
    out.push({ content: "backup", ctime: 1786000000, format: "vma.zst", size: 1, vmid: 302, volid: "local:backup/vzdump-qemu-302.vma.zst" });
    out.push({ content: "iso", ctime: 1786000000, format: "iso", size: 1, vmid: 303, volid: "truenas-backups:iso/x.iso" });
    out.push({ content: "backup", ctime: 1786000000, format: "pbs-vm", size: 5, vmid: 304, volid: "truenas-backups:backup/vm/304/2026-08-01T00:00:00Z", verification: { state: "none" } });
    require("fs").writeFileSync(process.argv[1], JSON.stringify(out));' "$PVE_DIR/pvesh-pve1-storage-truenas-backups-content.json"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  # In volid order: backup/vm/… before backup/vzdump-….
  assert_equal "$(last_request /api/agent/backups 'r.json.backups.map((b) => `${b.vmid} ${b.volid.split("/").pop()} ${b.size} ${b.protected} ${b.verified}`).join("\n")')" "$(
    echo '304 2026-08-01T00:00:00Z 5 false null'
    for i in 02 03 04 05 06 07 08 09 10; do echo "300 vzdump-qemu-300-day$i.vma.zst $((1000 + 10#$i)) false null"; done
    echo '300 vzdump-qemu-300-day11.vma.zst 1011 true null'
  )"
}
