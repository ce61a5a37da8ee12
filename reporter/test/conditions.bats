#!/usr/bin/env bats
# When a report is sent at all: curl, a base URL, diagnostics not "no", a random id.

setup_file() { load test_helper; start_mock; }
teardown_file() { load test_helper; stop_mock; }
setup() { load test_helper; reset_test; }

# A PATH with bash's usual tools but no curl.
path_without_curl() {
  local dir="$BATS_TEST_TMPDIR/nocurl" tool
  mkdir -p "$dir"
  for tool in cat env sleep; do ln -sf "$(command -v "$tool")" "$dir/$tool"; done
  ln -sf "$FIXTURES/pveversion" "$dir/pveversion"
  echo "$dir"
}

@test "nothing is sent when curl is not on PATH, and the caller keeps running" {
  run caller "PATH=$(path_without_curl)" -- 'post_to_api; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 0
}

@test "no VM report is sent when curl is not on PATH" {
  run caller "PATH=$(path_without_curl)" -- post_to_api_vm
  assert_caller_kept_running
  assert_requests 0
}

@test "nothing is sent when DIAGNOSTICS is no" {
  run caller DIAGNOSTICS=no -- 'post_to_api; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 0
}

@test "DIAGNOSTICS=NO counts as no" {
  run caller DIAGNOSTICS=NO -- 'post_to_api; post_update_to_api done'
  assert_requests 0
}

@test "reports are sent when DIAGNOSTICS is unset" {
  run caller -- 'unset DIAGNOSTICS; post_to_api; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 2
}

@test "nothing is sent without a random id (unset)" {
  run caller -- 'unset RANDOM_UUID; post_to_api; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 0
}

@test "nothing is sent without a random id (empty)" {
  run caller RANDOM_UUID= -- 'post_to_api; post_to_api_vm; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 0
}

@test "nothing is sent when USAGE_API_BASE is empty or unset" {
  run caller USAGE_API_BASE= -- 'post_to_api; post_to_api_vm; post_update_to_api done'
  assert_caller_kept_running
  run caller -- 'unset USAGE_API_BASE; post_to_api; post_to_api_vm; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 0
}
