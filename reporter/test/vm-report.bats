#!/usr/bin/env bats
# post_to_api_vm: the virtual machine start report and its settings file.

setup_file() { load test_helper; start_mock; }
teardown_file() { load test_helper; stop_mock; }
setup() { load test_helper; reset_test; }

@test "the VM report carries every field of part B: ct_type 2, type vm, G stripped, disableip6 empty" {
  run caller CT_TYPE=0 DISK_SIZE=32G DISABLEIP6=yes CORE_COUNT=4 RAM_SIZE=8192 NSAPP=debian13vm -- post_to_api_vm
  assert_caller_kept_running
  assert_requests 1
  assert_request 0 r.method POST
  assert_request 0 r.path /ok/upload
  assert_request 0 r.json '{"ct_type":2,"type":"vm","disk_size":32,"core_count":4,"ram_size":8192,"os_type":"debian","os_version":"12","disableip6":"","nsapp":"debian13vm","method":"default","pve_version":"8.2.4","status":"installing","random_id":"3b241101-e2bb-4255-8caf-4136c566a962"}'
}

@test "ct_type is fixed at 2 for a VM whatever CT_TYPE says" {
  run caller CT_TYPE=1 -- post_to_api_vm
  assert_request 0 r.json.ct_type 2
}

@test "a trailing G is stripped from the VM disk size" {
  run caller DISK_SIZE=20G -- post_to_api_vm
  assert_request 0 r.json.disk_size 20
}

@test "a VM disk size without G is kept" {
  run caller DISK_SIZE=20 -- post_to_api_vm
  assert_request 0 r.json.disk_size 20
}

@test "disableip6 is an empty string for a VM" {
  run caller DISABLEIP6=yes -- post_to_api_vm
  assert_request 0 'JSON.stringify(r.json.disableip6)' '""'
}

@test "pve_version is 'not found' for a VM on a machine without pveversion" {
  rm "$BATS_TEST_TMPDIR/bin/pveversion"
  run caller -- post_to_api_vm
  assert_request 0 r.json.pve_version 'not found'
}

@test "the VM report is skipped when the settings file is absent, and so is the later update" {
  rm "$BATS_TEST_TMPDIR/diagnostics"
  run caller -- 'post_to_api_vm; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 0
}

@test "DIAGNOSTICS=no in the settings file skips the VM report and the update, whatever the environment says" {
  printf 'DIAGNOSTICS=no\n' >"$BATS_TEST_TMPDIR/diagnostics"
  run caller DIAGNOSTICS=yes -- 'post_to_api_vm; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 0
}

@test "DIAGNOSTICS=yes in the settings file sends the VM report even when the environment said no" {
  run caller DIAGNOSTICS=no -- post_to_api_vm
  assert_requests 1
}

@test "the settings file is read as KEY=value lines: comments, spaces, quotes and CRLF are tolerated" {
  printf '# homefleet diagnostics\r\nOTHER=1\r\n  DIAGNOSTICS = "no"  \r\n' >"$BATS_TEST_TMPDIR/diagnostics"
  run caller -- post_to_api_vm
  assert_caller_kept_running
  assert_requests 0
}

@test "the settings file is never sourced: commands in it do not run" {
  printf 'DIAGNOSTICS=yes\ntouch %s/pwned\n$(touch %s/pwned2)\nDIAGNOSTICS=$(touch %s/pwned3)yes\n' \
    "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR" >"$BATS_TEST_TMPDIR/diagnostics"
  run caller -- post_to_api_vm
  assert_caller_kept_running
  [[ ! -e "$BATS_TEST_TMPDIR/pwned" && ! -e "$BATS_TEST_TMPDIR/pwned2" && ! -e "$BATS_TEST_TMPDIR/pwned3" ]]
}

@test "the last DIAGNOSTICS line of the settings file wins" {
  printf 'DIAGNOSTICS=yes\nDIAGNOSTICS=no\n' >"$BATS_TEST_TMPDIR/diagnostics"
  run caller -- post_to_api_vm
  assert_requests 0
}

@test "USAGE_SETTINGS_FILE defaults to /usr/local/homefleet/diagnostics" {
  grep -q 'USAGE_SETTINGS_FILE:-/usr/local/homefleet/diagnostics}' "$REPORTER"
  [[ -e /usr/local/homefleet/diagnostics ]] && skip "this machine has a real settings file"
  run caller -- 'unset USAGE_SETTINGS_FILE; post_to_api_vm'
  assert_caller_kept_running
  assert_requests 0
}

@test "the VM report and the update share the random id" {
  run caller -- 'post_to_api_vm; post_update_to_api done'
  assert_requests 2
  assert_request 1 r.path /ok/upload/updatestatus
  [[ "$(request 0 r.json.random_id)" == "$(request 1 r.json.random_id)" ]]
  assert_request 1 r.json.random_id "$TEST_UUID"
}
