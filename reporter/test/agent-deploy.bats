#!/usr/bin/env bats
# host-agent.sh deploys and rebuilds guests (PRODUCT.md "Deploy, rebuild and server keys"): the
# argument lists it builds for qm and pct, the ssh key file and the cloud config it hands them, every
# field checked before anything runs, and a half-made guest removed when a step fails. The fakes in
# fixtures/deploy-bin/ record each call one argument per line (a blank line after each call).

setup_file() { load agent_helper; start_agent_mock; make_installed_template; }
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  use_installed_root
  TEST_PATH="$FIXTURES/deploy-bin:$TEST_PATH"
  export DEPLOY_LOG="$BATS_TEST_TMPDIR/deploy.log" DEPLOY_DIR="$BATS_TEST_TMPDIR/deploy" PVE_DIR="$BATS_TEST_TMPDIR/pve"
  mkdir -p "$DEPLOY_DIR/storage/local/snippets" "$PVE_DIR"
  : >"$DEPLOY_LOG"
  # This host's VMs: 100 runs, 105 is the cloud-init template of fixtures/pve/qm-config-template.txt.
  # Its containers (the agent-bin fake's): 200 db (running), 201 cache (stopped).
  printf '%s\n' '[{"vmid":100,"name":"web","status":"running"},{"vmid":105,"name":"ubuntu-2404-cloud-v1","status":"stopped","template":1}]' >"$PVE_DIR/pvesh-pve1-qemu.json"
}
# A loop a failed test left running would take the next test's commands too.
teardown() { if [[ -n "${AGENT_PID:-}" ]]; then kill -TERM "$AGENT_PID" 2>/dev/null || true; fi; }

KEY_ED25519='ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEIxzKeZRW4sQKlSBiPx8OlsRaJG4XqCjn7Hs+/F3rzr ops@example.org'
KEY_ECDSA='ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBAhfHmm3M1jJLgMCEzvdWCaJhDde+SS6xjhw3QDy3IPQWeT0T4KWiX+U1IT+6X2UTPEjddYbPv6SN82Bg/IRVu4= backup key 2'
RSA_BLOB='AAAAB3NzaC1yc2EAAAADAQABAAABAQDF5qgVRfmVKoErAwRtvs9zoVOztr25acGZxT4ad9vZFxBddsBAr6ZgZEiNazms17oB3t1PxuTdBy4HEB6FsPO2TluBd1ofN8/GiwSOq2FOnT95DqcBWLZwlcTrBDJsfoGBJZZs6hBoe3okuRzyyN81hamm4KQwYD+q9USy2TT49QSSJMFRgW4m/Mz/xBleoATOovOn6SJsyrifxG8WxFaqso9qRnlOPKm7yV7j/6tTW1gGlvXb3tQQVfV4DWsBxECdogpvIwEjTydxS5W4Wp6PCmBfv9IZEreSTegkFz04ZKRv/0rOokFqG+OONDAsGBCGrLXAbDtfAZ3MR9yProLd'
CLOUD_CONFIG=$'#cloud-config\npackage_update: true\npackages:\n  - qemu-guest-agent\nruncmd:\n  - [ systemctl, enable, --now, qemu-guest-agent ]\n'

# deploy_command 'overrides' [operation_id]: a deploy command, these fields (a JSON object) over a
# minimal qemu deploy of template 105 as guest 300.
deploy_command() {
  node_e '
    const base = { type: "deploy", operation_id: process.argv[2] || "dep-1", new_vmid: 300, rebuild: false,
      source: { kind: "qemu", vmid: 105 }, name: "web-300", ssh_keys: [], start: true };
    const cmd = { ...base, ...JSON.parse(process.argv[1]) };
    for (const [k, v] of Object.entries(cmd)) if (v === "<absent>") delete cmd[k];
    console.log(JSON.stringify(cmd));
  ' "$1" "${2:-}"
}

# answer_with COMMAND...: the heartbeat answer carries these commands.
answer_with() { local IFS=,; control "{\"commands\":[$*]}"; }

once() { run_agent "FAKE_DEPLOY_LOG=$DEPLOY_LOG" "FAKE_DEPLOY_DIR=$DEPLOY_DIR" "FAKE_PVE_DIR=$PVE_DIR" "$@" -- --once; }

# call ARG...: one recorded call as the fakes write it.
call() { printf '%s\n' "$@"; echo; }

result_of() { last_request "/api/agent/operations/$1/result" "$2"; }

@test "a qemu deploy with two keys, a cloud config, a network with a VLAN and a larger disk: clone, set, resize, start" {
  cp "$FIXTURES/deploy/pvesh-qemu-config-clone.json" "$DEPLOY_DIR/qemu-300-config.json"
  answer_with "$(deploy_command "$(node_e 'console.log(JSON.stringify({ full: true, storage: "local-lvm", cores: 4, memory_mb: 8192, disk_gb: 40,
    network: { bridge: "vmbr1", vlan: 42, ip: "192.0.2.30/24", gateway: "192.0.2.1" }, ci_user: "ops",
    ssh_keys: [process.argv[1], process.argv[2]], cloud_config: process.argv[3], snippets_storage: "local" }))' "$KEY_ED25519" "$KEY_ECDSA" "$CLOUD_CONFIG")")"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  local keys
  keys="$(cat "$DEPLOY_DIR/keys-dir")/authorized_keys"
  assert_equal "$(cat "$DEPLOY_LOG")" "$(
    call qm clone 105 300 --name web-300 --full 1 --storage local-lvm
    call pvesh get /nodes/pve1/qemu/300/config --output-format json
    call pvesm path local:snippets/homefleet-300.yaml
    call qm set 300 --cores 4 --memory 8192 --ciuser ops --sshkeys "$keys" --ipconfig0 ip=192.0.2.30/24,gw=192.0.2.1 \
      --net0 virtio=BC:24:11:5E:7A:21,bridge=vmbr1,firewall=1,tag=42 --cicustom user=local:snippets/homefleet-300.yaml
    call qm resize 300 scsi0 40G
    call qm start 300)"
  # The key file: both lines, mode 0600, in a private folder of its own that is gone afterwards.
  assert_equal "$(cat "$DEPLOY_DIR/keys")" "$KEY_ED25519"$'\n'"$KEY_ECDSA"
  assert_equal "$(cat "$DEPLOY_DIR/keys-mode")" 600
  [[ "$keys" == "$BATS_TEST_TMPDIR"/homefleet-agent.*/keys.*/authorized_keys && ! -e "${keys%/*}" ]]
  # The cloud config was in the snippets folder, byte for byte, when qm set named it, and stays there.
  cmp "$DEPLOY_DIR/cicustom" <(printf '%s' "$CLOUD_CONFIG")
  cmp "$DEPLOY_DIR/storage/local/snippets/homefleet-300.yaml" <(printf '%s' "$CLOUD_CONFIG")
  assert_equal "$(stat -c %a "$DEPLOY_DIR/storage/local/snippets/homefleet-300.yaml")" 600
  assert_equal "$(result_of dep-1 '[r.json.exit_code, r.json.output.trimEnd().split("\n").pop()]')" '[0,"homefleet-agent: guest 300 deployed"]'
}

@test "the boot disk only grows: a disk_gb at or below its size runs no resize" {
  cp "$FIXTURES/deploy/pvesh-qemu-config-clone.json" "$DEPLOY_DIR/qemu-300-config.json"
  # scsi0 is 36352M (35.5 GiB): 35 is smaller, 36 larger.
  answer_with "$(deploy_command '{"disk_gb":35,"start":false}' small)" "$(deploy_command '{"new_vmid":301,"disk_gb":36,"start":false}' larger)"
  cp "$FIXTURES/deploy/pvesh-qemu-config-clone.json" "$DEPLOY_DIR/qemu-301-config.json"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  run grep -c -x resize "$DEPLOY_LOG"
  assert_equal "$output" 1
  grep -q -z -F "$(call qm resize 301 scsi0 36G)" "$DEPLOY_LOG"
  run grep -c -x start "$DEPLOY_LOG"
  assert_equal "$output" 0
  assert_equal "$(result_of small r.json.exit_code)$(result_of larger r.json.exit_code)" 00
}

@test "a qemu deploy with no optional field is a linked clone and a start, nothing else (no config read, no qm set)" {
  answer_with "$(deploy_command '{}')"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$DEPLOY_LOG")" "$(call qm clone 105 300 --name web-300; call qm start 300)"
  [[ ! -e "$DEPLOY_DIR/keys" ]]
  assert_equal "$(result_of dep-1 r.json.exit_code)" 0
}

@test "a container from a template volume: pct create with the options given, the key file, unprivileged, then pct start" {
  answer_with "$(deploy_command "$(node_e 'console.log(JSON.stringify({ source: { kind: "volume", volume: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst" },
    name: "ct-300", storage: "local-lvm", disk_gb: 8, cores: 1, memory_mb: 512, ssh_keys: [process.argv[1]],
    network: { bridge: "vmbr0", vlan: 10, ip: "192.0.2.50/24", gateway: "192.0.2.1" } }))' "$KEY_ED25519")")"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$DEPLOY_LOG")" "$(
    call pct create 300 local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst --hostname ct-300 --cores 1 --memory 512 --rootfs local-lvm:8 \
      --net0 name=eth0,bridge=vmbr0,ip=192.0.2.50/24,gw=192.0.2.1,tag=10 --ssh-public-keys "$(cat "$DEPLOY_DIR/keys-dir")/authorized_keys" --unprivileged 1
    call pct start 300)"
  assert_equal "$(cat "$DEPLOY_DIR/keys")" "$KEY_ED25519"
  assert_equal "$(cat "$DEPLOY_DIR/keys-mode")" 600
  assert_equal "$(result_of dep-1 r.json.exit_code)" 0
}

@test "an lxc clone: pct clone, pct set, pct resize of rootfs when larger, pct start" {
  cp "$FIXTURES/deploy/pvesh-lxc-config-clone.json" "$DEPLOY_DIR/lxc-301-config.json"
  answer_with "$(deploy_command '{"new_vmid":301,"source":{"kind":"lxc","vmid":200},"name":"db-copy","full":true,"cores":2,"memory_mb":1024,"disk_gb":40,
    "network":{"bridge":"vmbr0","ip":"dhcp"}}')"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$DEPLOY_LOG")" "$(
    call pct clone 200 301 --hostname db-copy --full 1
    call pct set 301 --cores 2 --memory 1024 --net0 name=eth0,bridge=vmbr0,ip=dhcp
    call pvesh get /nodes/pve1/lxc/301/config --output-format json
    call pct resize 301 rootfs 40G
    call pct start 301)"
  assert_equal "$(result_of dep-1 r.json.exit_code)" 0
}

@test "a qm set that fails: the half-made guest is destroyed, the failure names the step, the key file and the snippet are gone" {
  cp "$FIXTURES/deploy/pvesh-qemu-config-clone.json" "$DEPLOY_DIR/qemu-300-config.json"
  local cmd
  cmd="$(deploy_command "$(node_e 'console.log(JSON.stringify({ cores: 2, ssh_keys: [process.argv[1]], cloud_config: process.argv[2], snippets_storage: "local",
    network: { bridge: "vmbr0", ip: "dhcp" } }))' "$KEY_ED25519" "$CLOUD_CONFIG")" dep-fail)"
  # Through the command poll, with the agent still running when the result comes: what it removed,
  # it removed itself (not its exit, which removes its whole work folder).
  start_agent_loop "FAKE_DEPLOY_LOG=$DEPLOY_LOG" "FAKE_DEPLOY_DIR=$DEPLOY_DIR" "FAKE_PVE_DIR=$PVE_DIR" "FAKE_DEPLOY_FAIL=qm set" HOMEFLEET_POLL_WAIT_S=1
  wait_for '[[ "$(request_count "/api/agent/commands?wait=1")" -ge 1 ]]'
  control "{\"poll_commands\":[$cmd]}"
  wait_for '[[ "$(request_count /api/agent/operations/dep-fail/result)" -eq 1 ]]' 10
  local keys_dir
  keys_dir="$(cat "$DEPLOY_DIR/keys-dir")"
  [[ -n "$keys_dir" && ! -e "$keys_dir" ]] || { stop_agent_loop; echo "key folder $keys_dir is still there" >&2; return 1; }
  kill -0 "$AGENT_PID"
  stop_agent_loop
  assert_equal "$(cat "$DEPLOY_LOG")" "$(
    call qm clone 105 300 --name web-300
    call pvesh get /nodes/pve1/qemu/300/config --output-format json
    call pvesm path local:snippets/homefleet-300.yaml
    call qm set 300 --cores 2 --sshkeys "$keys_dir/authorized_keys" --ipconfig0 ip=dhcp --net0 virtio=BC:24:11:5E:7A:21,bridge=vmbr0,firewall=1 \
      --cicustom user=local:snippets/homefleet-300.yaml
    call qm destroy 300 --purge)"
  [[ ! -e "$DEPLOY_DIR/storage/local/snippets/homefleet-300.yaml" ]]
  assert_equal "$(result_of dep-fail 'r.json.exit_code')" 25
  local out
  out="$(result_of dep-fail r.json.output)"
  [[ "$out" == *"net0: invalid format - fake qm set failure"* ]] || { echo "$out" >&2; return 1; }
  assert_equal "${out##*$'\n'homefleet-agent: }" "the deploy failed at: qm set 300 --cores 2 --sshkeys $keys_dir/authorized_keys --ipconfig0 ip=dhcp --net0 virtio=BC:24:11:5E:7A:21,bridge=vmbr0,firewall=1 --cicustom user=local:snippets/homefleet-300.yaml (exit 25); the half-made guest 300 was removed"
}

@test "a clone that fails leaves nothing to remove: no destroy runs" {
  answer_with "$(deploy_command '{}')"
  once FAKE_DEPLOY_FAIL='qm clone'
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$DEPLOY_LOG")" "$(call qm clone 105 300 --name web-300)"
  assert_equal "$(result_of dep-1 '[r.json.exit_code, r.json.output.trimEnd().split("\n").pop()]')" \
    '[25,"homefleet-agent: the deploy failed at: qm clone 105 300 --name web-300 (exit 25)"]'
}

@test "every invalid field is refused (exit 126, the reason reported) and nothing runs" {
  local pwned="$BATS_TEST_TMPDIR/pwned" i=0 cmds=() expected=() item
  local -a cases=(
    '{"name":"Web_1"}|invalid name (a DNS label)'
    "{\"name\":\"\$(touch $pwned)\"}|invalid name (a DNS label)"
    '{"name":"-web"}|invalid name (a DNS label)'
    '{"cores":0}|cores must be from 1 to 128'
    '{"cores":129}|cores must be from 1 to 128'
    '{"cores":"2"}|cores must be a whole number'
    '{"memory_mb":63}|memory_mb must be from 64 to 4194304'
    '{"disk_gb":65537}|disk_gb must be from 1 to 65536'
    '{"disk_gb":1.5}|disk_gb must be a whole number'
    '{"network":{"bridge":"eth0","ip":"dhcp"}}|invalid bridge'
    '{"network":{"bridge":"vmbr0; reboot","ip":"dhcp"}}|invalid bridge'
    '{"network":{"bridge":"vmbr0","vlan":4095,"ip":"dhcp"}}|vlan must be from 1 to 4094'
    '{"network":{"bridge":"vmbr0","ip":"192.0.2.5"}}|invalid ip (dhcp or a.b.c.d/nn)'
    '{"network":{"bridge":"vmbr0","ip":"192.0.2.256/24"}}|invalid ip (dhcp or a.b.c.d/nn)'
    '{"network":{"bridge":"vmbr0","ip":"192.0.2.5/24,gw=10.0.0.1"}}|invalid ip (dhcp or a.b.c.d/nn)'
    '{"network":{"bridge":"vmbr0","ip":"192.0.2.5/24","gateway":"192.0.2.1/24"}}|invalid gateway (a.b.c.d)'
    '{"network":{"bridge":"vmbr0","ip":"dhcp","gateway":"192.0.2.1"}}|a gateway goes with a static ip, not dhcp'
    '{"network":"vmbr0"}|network must be an object'
    '{"ci_user":"Root"}|invalid ci_user'
    '{"full":true,"storage":"local lvm"}|invalid storage'
    '{"storage":"local-lvm"}|storage needs full: a linked clone stays on its template'"'"'s storage'
    '{"full":"yes"}|full must be true or false'
    '{"cloud_config":"#cloud-config\n","snippets_storage":"../etc"}|invalid snippets_storage'
    '{"cloud_config":"#cloud-config\n"}|cloud_config needs snippets_storage'
    '{"cloud_config":"runcmd: []\n","snippets_storage":"local"}|cloud_config must start with a #cloud-config line'
    '{"source":{"kind":"volume","volume":"local:iso/debian-12.iso"}}|invalid source volume'
    '{"source":{"kind":"volume","volume":"local:vztmpl/../../etc/shadow"}}|invalid source volume'
    '{"source":{"kind":"qemu","vmid":555}}|source guest 555 is not one this host listed'
    '{"source":{"kind":"qemu","vmid":200}}|source guest 200 is lxc, not qemu'
    '{"source":{"kind":"lxc","vmid":105}}|source guest 105 is qemu, not lxc'
    '{"source":{"kind":"vm","vmid":105}}|invalid source kind'
    '{"source":105}|source must be an object'
    '{"new_vmid":100}|guest 100 already exists'
    '{"new_vmid":99}|new_vmid must be from 100 to 999999999'
    '{"new_vmid":"300"}|new_vmid must be a whole number'
    '{"rebuild":true,"new_vmid":555}|guest 555 to rebuild is not one this host listed'
    '{"rebuild":true,"new_vmid":105}|a guest cannot be rebuilt from itself'
    '{"rebuild":"<absent>"}|rebuild is missing'
    '{"start":"<absent>"}|start is missing'
    '{"ssh_keys":"<absent>"}|ssh_keys must be a list'
    '{"ssh_keys":[1]}|ssh_keys.0 must be a string'
  )
  for item in "${cases[@]}"; do
    i=$((i + 1))
    cmds+=("$(deploy_command "${item%%|*}" "inv-$i")")
    expected+=("inv-$i 126 refused by the agent: ${item#*|}")
  done
  answer_with "${cmds[@]}"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  [[ ! -e "$pwned" ]]
  assert_equal "$(cat "$DEPLOY_LOG")" ""
  assert_equal "$(node_e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const out = rows.filter((r) => /\/result$/.test(r.path)).map((r) => [Number(r.path.split("/")[4].slice(4)), r.path.split("/")[4] + " " + JSON.parse(r.body).exit_code + " " + JSON.parse(r.body).output.trim()]);
    console.log(out.sort((a, b) => a[0] - b[0]).map((x) => x[1]).join("\n"));
  ' "$MOCK_DIR/requests.jsonl")" "$(printf '%s\n' "${expected[@]}")"
}

@test "key lines are checked against the OpenSSH grammar: a wrong type, a forged type, options, control characters and a cut blob are refused" {
  local i=0 cmds=() expected=() item
  local -a cases=(
    "ssh-dss $RSA_BLOB old|type ssh-dss is not accepted"
    "ssh-ed25519 $RSA_BLOB forged|its key data is not a ssh-ed25519 key"
    "ecdsa-sha2-nistp384 ${KEY_ECDSA#* }|its key data is not a ecdsa-sha2-nistp384 key"
    "command=\"touch /tmp/x\" $KEY_ED25519|not a line \"type base64-key [comment]\""
    "$KEY_ED25519"$'\t'"tab|not a line \"type base64-key [comment]\""
    "$KEY_ED25519"$'\n'"ssh-rsa $RSA_BLOB second|not a line \"type base64-key [comment]\""
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 cut|its key data is not a ssh-ed25519 key"
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEIxzKeZ*RW4sQKlSBiPx8OlsRaJG4XqCjn7Hs+/F3rzr|not a line \"type base64-key [comment]\""
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEIxzKeZRW4sQKlSBiPx8OlsRaJG4XqCjn7Hs+/F3rz|its key data is not base64"
  )
  for item in "${cases[@]}"; do
    i=$((i + 1))
    # Beside a valid key: one bad line refuses the whole command.
    cmds+=("$(node_e 'console.log(JSON.stringify({ type: "deploy", operation_id: "key-" + process.argv[1], new_vmid: 300, rebuild: false,
      source: { kind: "qemu", vmid: 105 }, name: "web-300", ssh_keys: [process.argv[2], process.argv[3]], start: true }))' "$i" "$KEY_ECDSA" "${item%|*}")")
    expected+=("key-$i 126 refused by the agent: ssh_keys.1 is not an OpenSSH public key: ${item##*|}")
  done
  # And the accepted kinds, with an RSA key: this one runs.
  cmds+=("$(deploy_command "$(node_e 'console.log(JSON.stringify({ ssh_keys: [process.argv[1], "ssh-rsa " + process.argv[2]] }))' "$KEY_ED25519" "$RSA_BLOB")" key-ok)")
  answer_with "${cmds[@]}"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(node_e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const out = rows.filter((r) => /\/key-\d+\/result$/.test(r.path)).map((r) => [Number(r.path.split("/")[4].slice(4)), r.path.split("/")[4] + " " + JSON.parse(r.body).exit_code + " " + JSON.parse(r.body).output.trim()]);
    console.log(out.sort((a, b) => a[0] - b[0]).map((x) => x[1]).join("\n"));
  ' "$MOCK_DIR/requests.jsonl")" "$(printf '%s\n' "${expected[@]}")"
  assert_equal "$(result_of key-ok r.json.exit_code)" 0
  assert_equal "$(cat "$DEPLOY_DIR/keys")" "$KEY_ED25519"$'\n'"ssh-rsa $RSA_BLOB"
}

@test "ssh keys, a cloud config or a user for a container that cannot take them: the command is refused whole" {
  local lxc='"source":{"kind":"lxc","vmid":200}' volume='"source":{"kind":"volume","volume":"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}'
  answer_with "$(deploy_command "{$lxc,\"ssh_keys\":[\"$KEY_ED25519\"]}" c-1)" \
    "$(deploy_command "{$lxc,\"cloud_config\":\"#cloud-config\\n\",\"snippets_storage\":\"local\"}" c-2)" \
    "$(deploy_command "{$lxc,\"ci_user\":\"ops\"}" c-3)" \
    "$(deploy_command "{$volume,\"cloud_config\":\"#cloud-config\\n\",\"snippets_storage\":\"local\"}" c-4)" \
    "$(deploy_command "{$volume,\"disk_gb\":8}" c-5)"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$DEPLOY_LOG")" ""
  assert_equal "$(for i in 1 2 3 4 5; do result_of "c-$i" '[r.json.exit_code, r.json.output.trim()].join(" ")'; done)" "$(printf '126 refused by the agent: %s\n' \
    'ssh keys cannot be applied to a cloned container' 'a cloud config cannot be applied to a cloned container' 'ci_user cannot be applied to a container' \
    'a cloud config cannot be applied to a container' 'disk_gb for a container template volume needs storage')"
}

@test "a rebuild stops the guest, destroys it with its disks and deploys under the same vmid" {
  answer_with "$(deploy_command '{"rebuild":true,"new_vmid":100,"name":"web"}' rebuild-vm)"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$DEPLOY_LOG")" "$(
    call pvesh get /nodes/pve1/qemu/100/status/current --output-format json
    call qm stop 100
    call qm destroy 100 --purge
    call qm clone 105 100 --name web
    call qm start 100)"
  assert_equal "$(result_of rebuild-vm r.json.exit_code)" 0
}

@test "a rebuild of a stopped container from a template volume: no stop, pct destroy, pct create" {
  printf '%s\n' '{"cpus":1,"lock":"","maxdisk":8589934592,"maxmem":536870912,"name":"cache","status":"stopped","type":"lxc","uptime":0,"vmid":201}' >"$DEPLOY_DIR/lxc-201-status.json"
  answer_with "$(deploy_command '{"rebuild":true,"new_vmid":201,"name":"cache","source":{"kind":"volume","volume":"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"},"start":false}' rebuild-ct)"
  once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$DEPLOY_LOG")" "$(
    call pvesh get /nodes/pve1/lxc/201/status/current --output-format json
    call pct destroy 201 --purge
    call pct create 201 local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst --hostname cache --unprivileged 1)"
  assert_equal "$(result_of rebuild-ct r.json.exit_code)" 0
}

@test "a rebuild whose stop fails destroys nothing" {
  answer_with "$(deploy_command '{"rebuild":true,"new_vmid":100,"name":"web"}' rebuild-stuck)"
  once FAKE_DEPLOY_FAIL='qm stop'
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$DEPLOY_LOG")" "$(call pvesh get /nodes/pve1/qemu/100/status/current --output-format json; call qm stop 100)"
  assert_equal "$(result_of rebuild-stuck '[r.json.exit_code, r.json.output.trimEnd().split("\n").pop()]')" \
    '[25,"homefleet-agent: the deploy failed at: qm stop 100 (exit 25)"]'
}
