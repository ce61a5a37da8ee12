#!/usr/bin/env bats
# host-agent.sh and the node's storage (PRODUCT.md "Host storage, downloads and the file cache"):
# the storages in the heartbeat and the volumes sent to POST /api/agent/storage, from published
# outputs of real nodes (fixtures/storage/, each with its .source); the download command's pvesh
# argument list and its task's outcome; and uploads fetched from the controller with the host token,
# resumed with Range, checked and renamed into place. The fake pvesh records each storage call one
# argument a line (a blank line after each call) in $PVE_DIR/pvesh-storage.log.

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  export PVE_DIR="$BATS_TEST_TMPDIR/pve"
  ISO_DIR="$PVE_DIR/storage/local/template/iso"
  mkdir -p "$ISO_DIR"
  cp "$FIXTURES/storage/nodes-storage.json" "$PVE_DIR/pvesh-pve1-storage.json"
  cp "$FIXTURES/storage/storage-local-content.json" "$PVE_DIR/pvesh-pve1-storage-local-content.json"
  rm -f "$MOCK_DIR/file-sends.jsonl"
}
teardown() { if [[ -n "${AGENT_PID:-}" ]]; then kill -TERM "$AGENT_PID" 2>/dev/null || true; fi; }

once() { run_agent "FAKE_PVE_DIR=$PVE_DIR" "$@" -- --once; }

# answer_with COMMAND...: the heartbeat answer carries these commands (and extra control fields $EXTRA).
answer_with() { local IFS=,; control "{${EXTRA:+$EXTRA,}\"commands\":[$*]}"; }

result_of() { last_request "/api/agent/operations/$1/result" "$2"; }

# The storage calls the fake pvesh received, each on one line.
storage_calls() { [[ -f "$PVE_DIR/pvesh-storage.log" ]] && awk 'BEGIN { RS = ""; FS = "\n" } { $1 = $1; print }' "$PVE_DIR/pvesh-storage.log"; }

sha_of() { local s; s="$(sha256sum <"$1")"; printf '%s' "${s%% *}"; }

# Edits the storage list the fake prints: a node expression over `list`.
edit_storages() {
  node_e 'const fs = require("fs"); const f = process.argv[1]; const list = JSON.parse(fs.readFileSync(f, "utf8"));
    new Function("list", process.argv[2])(list); fs.writeFileSync(f, JSON.stringify(list));' "$PVE_DIR/pvesh-pve1-storage.json" "$1"
}

# upload_command 'overrides': an upload of file 5 (tiny.iso) onto local's iso folder.
upload_command() {
  local overrides="${1:-}"
  node_e '
    const cmd = { type: "upload", operation_id: "up-1", file_id: 5, name: "tiny.iso", size: Number(process.argv[2]),
      sha256: process.argv[3], storage: "local", content: "iso", replace: false, ...JSON.parse(process.argv[1]) };
    console.log(JSON.stringify(cmd));' "${overrides:-"{}"}" "$(stat -c %s "$BATS_TEST_TMPDIR/tiny.iso")" "$(sha_of "$BATS_TEST_TMPDIR/tiny.iso")"
}

make_file() { head -c "$2" /dev/urandom >"$1"; }

# Nothing of an upload is left in the storage's folder but the file itself.
no_temp_files() {
  run find "$ISO_DIR" -name '.homefleet-upload*'
  assert_equal "$output" ''
}

@test "every storage fixture names where it was published, and an adapted one says so" {
  local f
  for f in "$FIXTURES"/storage/*; do
    [[ "$f" == *.source || "$f" == */README.md ]] && continue
    [[ -s "$f.source" ]] || { echo "$f has no .source file" >&2; return 1; }
    grep -q -E 'https://[^ ]+' "$f.source" || { echo "$f.source names no address" >&2; return 1; }
    grep -q -E 'commit [0-9a-f]{40}|[0-9]{4}-[0-9]{2}-[0-9]{2}|no date on the page' "$f.source" || { echo "$f.source names no commit or date" >&2; return 1; }
  done
  run ! grep -q ADAPTED "$FIXTURES/storage/storage-local-content.json.source"
  grep -q '^ADAPTED' "$FIXTURES/storage/nodes-storage.json.source"
}

@test "the heartbeat carries the node's storages, and the volumes of the listed contents go to POST /api/agent/storage" {
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/heartbeat 'r.json.storages')" "$(printf '[%s,%s,%s]' \
    '{"storage":"local","type":"dir","content":["iso","import","backup","vztmpl","snippets"],"avail":87736700928,"total":100861726720,"active":true,"shared":false}' \
    '{"storage":"local-lvm","type":"lvmthin","content":["images","rootdir"],"avail":714370750140,"total":852878163968,"active":true,"shared":false}' \
    '{"storage":"truenas-backups","type":"nfs","content":["backup"],"avail":1857100447744,"total":2037808889856,"active":true,"shared":true}')"
  # The published list, sorted by volid; the name with a space and brackets is left out.
  local expected
  expected="$(node_e '
    const list = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
      .filter((v) => /^[A-Za-z][A-Za-z0-9_.-]{0,63}:[A-Za-z0-9][A-Za-z0-9._+\/-]{0,300}$/.test(v.volid))
      .map((v) => ({ volid: v.volid, format: v.format, size: v.size, ctime: v.ctime }))
      .sort((a, b) => (a.volid < b.volid ? -1 : 1));
    console.log(JSON.stringify({ storage: "local", volumes: list }));' "$FIXTURES/storage/storage-local-content.json")"
  assert_equal "$(request_count /api/agent/storage)" 1
  assert_equal "$(last_request /api/agent/storage 'r.body')" "$expected"
  assert_equal "$(last_request /api/agent/storage 'r.json.volumes.length')" 10
  [[ "$(last_request /api/agent/storage 'r.body')" != *tsurugi* ]]
  # storage_sha256: the SHA-256 of "<storage> <SHA-256 of its volumes>\n" for each listed storage.
  assert_equal "$(last_request /api/agent/heartbeat 'r.json.storage_sha256')" "$(node_e '
    const h = (s) => require("crypto").createHash("sha256").update(s).digest("hex");
    console.log(h("local " + h(JSON.stringify(JSON.parse(process.argv[1]).volumes)) + "\n"));' "$expected")"
  # Only local holds iso, vztmpl, snippets or import: only its content is listed.
  assert_equal "$(storage_calls)" "$(printf '%s\n' 'get /nodes/pve1/storage --output-format json' \
    'get /nodes/pve1/storage/local/content --output-format json')"
}

@test "a disabled storage is left out; an inactive one is reported but its volumes are not listed" {
  edit_storages 'list[2].enabled = 0; list[0].active = 0;'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/heartbeat '[r.json.storages.map((s) => s.storage + ":" + s.active), r.json.storage_sha256]')" \
    '[["local:false","local-lvm:true"],null]'
  assert_equal "$(request_count /api/agent/storage)" 0
  assert_equal "$(storage_calls)" 'get /nodes/pve1/storage --output-format json'
}

@test "without a storage list from pvesh the heartbeat leaves the storage fields out" {
  rm "$PVE_DIR/pvesh-pve1-storage.json"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(last_request /api/agent/heartbeat '["storages" in r.json, "storage_sha256" in r.json]')" '[false,false]'
}

@test "the volumes are listed once while the used bytes stay the same, and sent again only after a refused POST" {
  control '{"storage_failures":1}'
  start_agent_loop "FAKE_PVE_DIR=$PVE_DIR" HOMEFLEET_POLL_WAIT_S=1
  wait_for '(($(request_count /api/agent/heartbeat) >= 4))' 15
  stop_agent_loop
  assert_equal "$(request_count /api/agent/storage)" 2
  assert_equal "$(storage_calls | grep -c /content)" 1
  # Every heartbeat carried the same hash.
  assert_equal "$(node_e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    console.log(new Set(rows.filter((r) => r.path === "/api/agent/heartbeat").map((r) => JSON.parse(r.body).storage_sha256)).size);' "$MOCK_DIR/requests.jsonl")" 1
}

@test "a download runs pvesh create .../download-url with exactly the given values and reports the task's exit status" {
  local sum=6f5d0a9bd8e9fd6a3e9f76b1ad1ea1da7c0e5b6b4b1bfa9b6b3d7e7f0c2a4b5c
  answer_with '{"type":"download","operation_id":"dl-1","storage":"local","url":"https://deb.example.org/debian-cd/12.7.0/amd64/iso-cd/debian-12.7.0-amd64-netinst.iso?mirror=1&x=a%20b","filename":"debian-12.7.0-amd64-netinst.iso","content":"iso","checksum":"'"$sum"'","checksum_algorithm":"sha256"}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(awk 'BEGIN { RS = "" } /download-url/' "$PVE_DIR/pvesh-storage.log")" "$(printf '%s\n' create /nodes/pve1/storage/local/download-url \
    --url 'https://deb.example.org/debian-cd/12.7.0/amd64/iso-cd/debian-12.7.0-amd64-netinst.iso?mirror=1&x=a%20b' \
    --filename debian-12.7.0-amd64-netinst.iso --content iso --checksum "$sum" --checksum-algorithm sha256)"
  assert_equal "$(storage_calls | tail -n 1)" \
    'get /nodes/pve1/tasks/UPID:example-node:002E096A:0E10F08E:6382D261:vzcreate:123:root@pam:/status --output-format json'
  assert_equal "$(result_of dl-1 'r.json.exit_code')" 0
  [[ "$(result_of dl-1 'r.json.output')" == *'ended: OK'* ]]
}

@test "a download whose task failed reports exit 1 with the task's exit status" {
  cp "$FIXTURES/storage/task-status-failed.json" "$PVE_DIR/task-status.json"
  answer_with '{"type":"download","operation_id":"dl-2","storage":"local","url":"http://deb.example.org/a.tar.zst","filename":"a.tar.zst","content":"vztmpl"}'
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(result_of dl-2 'r.json.exit_code')" 1
  [[ "$(result_of dl-2 'r.json.output')" == *"failed: command 'ifreload -a' failed: exit code 1"* ]]
  # Without a checksum, no checksum arguments.
  assert_equal "$(awk 'BEGIN { RS = "" } /download-url/' "$PVE_DIR/pvesh-storage.log" | tr '\n' ' ')" \
    'create /nodes/pve1/storage/local/download-url --url http://deb.example.org/a.tar.zst --filename a.tar.zst --content vztmpl '
}

@test "downloads and uploads with a bad field, or onto a storage that cannot take them, are refused and nothing runs" {
  make_file "$BATS_TEST_TMPDIR/tiny.iso" 1000
  edit_storages 'list.push({ active: 0, content: "iso", enabled: 1, shared: 1, storage: "offline-nfs", type: "nfs" });'
  local d='"type":"download","storage":"local","url":"https://deb.example.org/x.iso","filename":"x.iso","content":"iso"'
  local -a bad=(
    "{$d,\"operation_id\":\"r1\",\"storage\":\"nas\"}"
    "{$d,\"operation_id\":\"r2\",\"storage\":\"local-lvm\"}"
    "{$d,\"operation_id\":\"r3\",\"content\":\"snippets\"}"
    "{$d,\"operation_id\":\"r4\",\"url\":\"ftp://deb.example.org/x.iso\"}"
    "{$d,\"operation_id\":\"r5\",\"url\":\"https://user:secret@deb.example.org/x.iso\"}"
    "{$d,\"operation_id\":\"r6\",\"url\":\"https://deb.example.org/x.iso --filename y\"}"
    "{$d,\"operation_id\":\"r7\",\"filename\":\"../x.iso\"}"
    "{$d,\"operation_id\":\"r8\",\"checksum\":\"$(printf 'a%.0s' {1..64})\"}"
    "{$d,\"operation_id\":\"r9\",\"checksum\":\"$(printf 'a%.0s' {1..64})\",\"checksum_algorithm\":\"sha512\"}"
    "{$d,\"operation_id\":\"r10\",\"storage\":\"offline-nfs\"}"
    "$(upload_command '{"operation_id":"r11","name":"iso/tiny.iso"}')"
    "$(upload_command '{"operation_id":"r12","content":"images"}')"
    "$(upload_command '{"operation_id":"r13","sha256":"ABC"}')"
    "$(upload_command '{"operation_id":"r14","file_id":"5"}')"
    "$(upload_command '{"operation_id":"r15","storage":"truenas-backups"}')"
    "$(upload_command '{"operation_id":"r16","replace":"yes"}')"
  )
  EXTRA="\"files\":{\"5\":\"$BATS_TEST_TMPDIR/tiny.iso\"}" answer_with "${bad[@]}"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  local i got=''
  for ((i = 1; i <= ${#bad[@]}; i++)); do got+="r$i: $(result_of "r$i" '[r.json.exit_code, r.json.output].join(" ")')"$'\n'; done
  assert_equal "${got%$'\n'}" "$(printf '%s\n' \
    'r1: 126 refused by the agent: storage nas is not one this host listed' \
    'r2: 126 refused by the agent: storage local-lvm does not hold iso' \
    'r3: 126 refused by the agent: content must be one of: iso vztmpl import' \
    'r4: 126 refused by the agent: url must be an http or https URL' \
    'r5: 126 refused by the agent: url must name a host, without user information' \
    'r6: 126 refused by the agent: url must be an http or https URL' \
    'r7: 126 refused by the agent: filename must be a file name without a path' \
    'r8: 126 refused by the agent: checksum and checksum_algorithm go together' \
    'r9: 126 refused by the agent: checksum must be a SHA-512 in hex' \
    'r10: 126 refused by the agent: storage offline-nfs is not active' \
    'r11: 126 refused by the agent: name must be a file name without a path' \
    'r12: 126 refused by the agent: content must be one of: iso vztmpl snippets import' \
    'r13: 126 refused by the agent: sha256 must be 64 lower-case hex digits' \
    'r14: 126 refused by the agent: file_id must be a whole number' \
    'r15: 126 refused by the agent: storage truenas-backups does not hold iso' \
    'r16: 126 refused by the agent: replace must be true or false')"
  # Nothing ran: no download, no pvesm, no file fetched, nothing written.
  [[ "$(storage_calls)" != *create* ]]
  [[ ! -e "$PVE_DIR/pvesm.log" && ! -e "$MOCK_DIR/file-sends.jsonl" ]]
  assert_equal "$(ls -A "$ISO_DIR")" ''
}

@test "an upload lands in the storage's folder with the right bytes and mode 0644, the host token never on a command line" {
  make_file "$BATS_TEST_TMPDIR/tiny.iso" 300000
  record_curl_args
  TEST_PATH="$BATS_TEST_TMPDIR/bin:$TEST_PATH"
  EXTRA="\"files\":{\"5\":\"$BATS_TEST_TMPDIR/tiny.iso\"}" answer_with "$(upload_command)"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(result_of up-1 'r.json.exit_code')" 0
  cmp "$BATS_TEST_TMPDIR/tiny.iso" "$ISO_DIR/tiny.iso"
  assert_equal "$(stat -c %a "$ISO_DIR/tiny.iso")" 644
  assert_equal "$(cat "$PVE_DIR/pvesm.log")" 'path local:iso/tiny.iso'
  assert_equal "$(last_request /api/agent/files/5 '[r.method, r.headers.authorization, r.headers.range ?? null]')" "[\"GET\",\"Bearer $HOST_TOKEN\",null]"
  grep -q 'api/agent/files/5' "$BATS_TEST_TMPDIR/curl-args"
  run ! grep -q -F "$HOST_TOKEN" "$BATS_TEST_TMPDIR/curl-args"
  no_temp_files
}

@test "a transfer cut half-way is resumed with Range: bytes=<half>- and only the rest is sent" {
  make_file "$BATS_TEST_TMPDIR/tiny.iso" 1048576
  EXTRA="\"files\":{\"5\":\"$BATS_TEST_TMPDIR/tiny.iso\"},\"cut_file_once\":true" answer_with "$(upload_command)"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(result_of up-1 'r.json.exit_code')" 0
  cmp "$BATS_TEST_TMPDIR/tiny.iso" "$ISO_DIR/tiny.iso"
  assert_equal "$(cat "$MOCK_DIR/file-sends.jsonl")" "$(printf '%s\n' '{"id":"5","status":200,"start":0,"sent":524288}' '{"id":"5","status":206,"start":524288,"sent":524288}')"
  assert_equal "$(last_request /api/agent/files/5 'r.headers.range')" 'bytes=524288-'
  [[ "$(result_of up-1 'r.json.output')" == *'resuming at byte 524288'* ]]
  no_temp_files
}

@test "an existing file with other bytes fails with exists and is kept; with replace it is replaced" {
  make_file "$BATS_TEST_TMPDIR/tiny.iso" 5000
  printf 'older bytes\n' >"$ISO_DIR/tiny.iso"
  EXTRA="\"files\":{\"5\":\"$BATS_TEST_TMPDIR/tiny.iso\"}" answer_with "$(upload_command)"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(result_of up-1 'r.json.exit_code')" 1
  [[ "$(result_of up-1 'r.json.output')" == *"exists: $ISO_DIR/tiny.iso holds other bytes"* ]]
  assert_equal "$(cat "$ISO_DIR/tiny.iso")" 'older bytes'
  [[ ! -e "$MOCK_DIR/file-sends.jsonl" ]]

  EXTRA="\"files\":{\"5\":\"$BATS_TEST_TMPDIR/tiny.iso\"}" answer_with "$(upload_command '{"operation_id":"up-2","replace":true}')"
  once
  assert_equal "$(result_of up-2 'r.json.exit_code')" 0
  cmp "$BATS_TEST_TMPDIR/tiny.iso" "$ISO_DIR/tiny.iso"
  no_temp_files
}

@test "a file already there with the same SHA-256 is done without fetching it" {
  make_file "$BATS_TEST_TMPDIR/tiny.iso" 5000
  cp "$BATS_TEST_TMPDIR/tiny.iso" "$ISO_DIR/tiny.iso"
  EXTRA="\"files\":{\"5\":\"$BATS_TEST_TMPDIR/tiny.iso\"}" answer_with "$(upload_command)"
  once
  assert_equal "$(result_of up-1 'r.json.exit_code')" 0
  [[ "$(result_of up-1 'r.json.output')" == *'already there with the same SHA-256'* ]]
  [[ ! -e "$MOCK_DIR/file-sends.jsonl" ]]
}

@test "bytes that do not match the SHA-256 are not renamed into place and the temp file is gone" {
  make_file "$BATS_TEST_TMPDIR/tiny.iso" 5000
  make_file "$BATS_TEST_TMPDIR/other" 5000
  EXTRA="\"files\":{\"5\":\"$BATS_TEST_TMPDIR/other\"}" answer_with "$(upload_command)"
  once
  assert_equal "$(result_of up-1 'r.json.exit_code')" 1
  [[ "$(result_of up-1 'r.json.output')" == *'SHA-256 mismatch'* ]]
  assert_equal "$(ls -A "$ISO_DIR")" ''
}

@test "a file the controller refuses (no upload of it for this host: 401) fails and leaves nothing" {
  make_file "$BATS_TEST_TMPDIR/tiny.iso" 5000
  answer_with "$(upload_command)"
  once
  assert_equal "$(result_of up-1 'r.json.exit_code')" 1
  [[ "$(result_of up-1 'r.json.output')" == *'the controller refused the file (401)'* ]]
  assert_equal "$(ls -A "$ISO_DIR")" ''
}
