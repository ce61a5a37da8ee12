#!/usr/bin/env bats
# Redirects, and every way the ingestion server can fail: the caller never notices.

setup_file() { load test_helper; start_mock; }
teardown_file() { load test_helper; stop_mock; }
setup() { load test_helper; reset_test; }

# Runs the caller and fails when it took longer than $1 seconds.
timed_caller() {
  local limit="$1" started
  shift
  started=$SECONDS
  run caller "$@"
  ELAPSED=$((SECONDS - started))
  if ((ELAPSED > limit)); then
    echo "the caller took ${ELAPSED}s, more than ${limit}s" >&2
    return 1
  fi
}

@test "a 301 redirect is followed with POST and the same body" {
  run caller "USAGE_API_BASE=$MOCK/r301" -- post_to_api
  assert_caller_kept_running
  assert_requests 2
  assert_request 0 r.path /r301/upload
  assert_request 1 r.path /ok/upload
  assert_request 1 r.method POST
  [[ "$(request 1 r.body)" == "$(request 0 r.body)" ]]
  assert_request 1 r.json.status installing
}

@test "a 302 redirect is followed with POST and the same body" {
  run caller "USAGE_API_BASE=$MOCK/r302" -- 'post_update_to_api done'
  assert_caller_kept_running
  assert_requests 2
  assert_request 0 r.path /r302/upload/updatestatus
  assert_request 1 r.path /ok/upload/updatestatus
  assert_request 1 r.method POST
  assert_request 1 r.json.status done
  [[ "$(request 1 r.body)" == "$(request 0 r.body)" ]]
}

@test "a redirect loop is cut off after a few hops" {
  timed_caller 5 "USAGE_API_BASE=$MOCK/loop" -- post_to_api
  assert_caller_kept_running
  assert_requests 4
}

@test "a server that is down is ignored: the caller under set -euo pipefail keeps running" {
  local port
  port="$(node "$FIXTURES/free-port.mjs")"
  timed_caller 5 "USAGE_API_BASE=http://127.0.0.1:$port/api/usage" -- 'post_to_api; post_to_api_vm; post_update_to_api done'
  assert_caller_kept_running
}

@test "a 500 answer is ignored: the caller keeps running" {
  run caller "USAGE_API_BASE=$MOCK/fail" -- 'post_to_api; post_update_to_api failed'
  assert_caller_kept_running
  assert_requests 2
}

@test "a server that never answers is given up on after USAGE_API_TIMEOUT seconds" {
  timed_caller 3 "USAGE_API_BASE=$MOCK/hang" USAGE_API_TIMEOUT=1 -- post_to_api
  assert_caller_kept_running
  assert_requests 1
}

@test "without USAGE_API_TIMEOUT a server that never answers is given up on within a few seconds" {
  timed_caller 7 "USAGE_API_BASE=$MOCK/hang" -- 'unset USAGE_API_TIMEOUT; post_update_to_api failed'
  assert_caller_kept_running
  ((ELAPSED >= 4))
}

@test "an invalid USAGE_API_TIMEOUT falls back to the default bound" {
  timed_caller 7 "USAGE_API_BASE=$MOCK/hang" USAGE_API_TIMEOUT='1; echo injected' -- post_to_api
  assert_caller_kept_running
}
