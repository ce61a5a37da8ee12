#!/usr/bin/env bats
# post_update_to_api [status] [error]: the status update, its defaults and the once-per-run rule.

setup_file() { load test_helper; start_mock; }
teardown_file() { load test_helper; stop_mock; }
setup() { load test_helper; reset_test; }

@test "the update POSTs status, error and random_id as JSON to {USAGE_API_BASE}/upload/updatestatus" {
  run caller -- 'post_update_to_api done "none"'
  assert_caller_kept_running
  assert_requests 1
  assert_request 0 r.method POST
  assert_request 0 r.path /ok/upload/updatestatus
  assert_request 0 "r.headers['content-type']" application/json
  assert_request 0 r.json '{"status":"done","error":"none","random_id":"3b241101-e2bb-4255-8caf-4136c566a962"}'
}

@test "status defaults to failed" {
  run caller -- post_update_to_api
  assert_request 0 r.json.status failed
}

@test "error defaults to 'No error message'" {
  run caller -- 'post_update_to_api done'
  assert_request 0 r.json '{"status":"done","error":"No error message","random_id":"3b241101-e2bb-4255-8caf-4136c566a962"}'
}

@test "empty arguments take the defaults too" {
  run caller -- 'post_update_to_api "" ""'
  assert_request 0 '[r.json.status, r.json.error]' '["failed","No error message"]'
}

@test "the update is sent at most once per run: later calls do nothing" {
  run caller -- 'post_update_to_api done; post_update_to_api failed "second"; post_update_to_api failed third'
  assert_caller_kept_running
  assert_requests 1
  assert_request 0 r.json.status done
}

@test "the once-per-run guard is POST_UPDATE_DONE=true" {
  run caller -- 'post_update_to_api done; echo "$POST_UPDATE_DONE"'
  [[ "$output" == $'true\ncaller-still-running' ]]
  run caller -- 'POST_UPDATE_DONE=true; post_update_to_api done'
  assert_requests 1
}

@test "the start report and the update share random_id" {
  run caller -- 'post_to_api; post_update_to_api done'
  assert_requests 2
  assert_request 0 r.path /ok/upload
  assert_request 1 r.path /ok/upload/updatestatus
  assert_request 0 r.json.random_id "$TEST_UUID"
  assert_request 1 r.json.random_id "$TEST_UUID"
}

@test "an update that could not be delivered still counts as the run's one update" {
  run caller "USAGE_API_BASE=$MOCK/fail" -- 'post_update_to_api failed; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 1
}

@test "a long error text is cut to its first 1000 characters" {
  local long
  long="$(printf 'x%.0s' {1..1500})"
  run caller "ERROR_TEXT=$long" -- 'post_update_to_api failed "$ERROR_TEXT"'
  assert_caller_kept_running
  assert_request 0 r.json.error.length 1000
}
