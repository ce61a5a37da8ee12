#!/usr/bin/env bats
# post_to_api: the container start report and each of its fields.

setup_file() { load test_helper; start_mock; }
teardown_file() { load test_helper; stop_mock; }
setup() { load test_helper; reset_test; }

@test "post_to_api POSTs JSON to {USAGE_API_BASE}/upload" {
  run caller -- post_to_api
  assert_caller_kept_running
  assert_requests 1
  assert_request 0 r.method POST
  assert_request 0 r.path /ok/upload
  assert_request 0 "r.headers['content-type']" application/json
}

@test "the container report carries every field of part B with its type" {
  run caller -- post_to_api
  assert_caller_kept_running
  assert_request 0 r.json '{"ct_type":1,"type":"lxc","disk_size":8,"core_count":2,"ram_size":2048,"os_type":"debian","os_version":"12","disableip6":"no","nsapp":"homeassistant","method":"default","pve_version":"8.2.4","status":"installing","random_id":"3b241101-e2bb-4255-8caf-4136c566a962"}'
}

@test "ct_type is the container's CT_TYPE as a number" {
  run caller CT_TYPE=0 -- post_to_api
  assert_request 0 r.json.ct_type 0
}

@test "type is lxc for a container" {
  run caller -- post_to_api
  assert_request 0 r.json.type lxc
}

@test "disk_size, core_count and ram_size are JSON numbers" {
  run caller DISK_SIZE=32 CORE_COUNT=4 RAM_SIZE=4096 -- post_to_api
  assert_request 0 '[r.json.disk_size, r.json.core_count, r.json.ram_size]' '[32,4,4096]'
}

@test "a decimal number stays a number and leading zeros are dropped" {
  run caller DISK_SIZE=2.5 CORE_COUNT=04 -- post_to_api
  assert_request 0 '[r.json.disk_size, r.json.core_count]' '[2.5,4]'
}

@test "a non-numeric number field is sent as null, never as a bare word" {
  run caller DISK_SIZE=8G CORE_COUNT=two RAM_SIZE='1 2' CT_TYPE=x -- post_to_api
  assert_caller_kept_running
  assert_request 0 '[r.json.ct_type, r.json.disk_size, r.json.core_count, r.json.ram_size]' '[null,null,null,null]'
}

@test "os_type and os_version come from var_os and var_version" {
  run caller var_os=alpine var_version=3.20 -- post_to_api
  assert_request 0 '[r.json.os_type, r.json.os_version]' '["alpine","3.20"]'
}

@test "disableip6 is the container's DISABLEIP6 as a string" {
  run caller DISABLEIP6=yes -- post_to_api
  assert_request 0 r.json.disableip6 yes
}

@test "nsapp and method come from NSAPP and METHOD" {
  run caller NSAPP=jellyfin METHOD=advanced -- post_to_api
  assert_request 0 '[r.json.nsapp, r.json.method]' '["jellyfin","advanced"]'
}

@test "pve_version is the version field of pveversion's output" {
  run caller -- post_to_api
  assert_request 0 r.json.pve_version 8.2.4
}

@test "pve_version is 'not found' when pveversion is not installed" {
  rm "$BATS_TEST_TMPDIR/bin/pveversion"
  run caller -- post_to_api
  assert_request 0 r.json.pve_version 'not found'
}

@test "pve_version is 'not found' when pveversion prints nothing usable" {
  rm "$BATS_TEST_TMPDIR/bin/pveversion"
  printf '#!/bin/sh\necho "something went wrong" >&2\nexit 3\n' >"$BATS_TEST_TMPDIR/bin/pveversion"
  chmod +x "$BATS_TEST_TMPDIR/bin/pveversion"
  run caller -- post_to_api
  assert_caller_kept_running
  assert_request 0 r.json.pve_version 'not found'
}

@test "status is installing" {
  run caller -- post_to_api
  assert_request 0 r.json.status installing
}

@test "random_id is RANDOM_UUID" {
  run caller RANDOM_UUID=11111111-2222-4333-8444-555555555555 -- post_to_api
  assert_request 0 r.json.random_id 11111111-2222-4333-8444-555555555555
}

@test "unset install variables become empty strings and nulls" {
  run timeout --kill-after=2 "$CALLER_LIMIT" env -i "PATH=$TEST_PATH" "USAGE_API_BASE=$MOCK/ok" "RANDOM_UUID=$TEST_UUID" "$BASH_BIN" --noprofile --norc -c \
    "set -euo pipefail; source '$REPORTER'; post_to_api; echo caller-still-running"
  assert_caller_kept_running
  assert_request 0 r.json '{"ct_type":null,"type":"lxc","disk_size":null,"core_count":null,"ram_size":null,"os_type":"","os_version":"","disableip6":"","nsapp":"","method":"","pve_version":"8.2.4","status":"installing","random_id":"3b241101-e2bb-4255-8caf-4136c566a962"}'
}

@test "a trailing slash on USAGE_API_BASE does not double the slash" {
  run caller "USAGE_API_BASE=$MOCK/ok/" -- post_to_api
  assert_request 0 r.path /ok/upload
}
