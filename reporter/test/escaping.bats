#!/usr/bin/env bats
# Whatever the texts hold, the body is valid JSON that decodes to exactly that text.

setup_file() { load test_helper; start_mock; }
teardown_file() { load test_helper; stop_mock; }
setup() { load test_helper; reset_test; }

# The update's error text $1 arrives intact: the body parses and error equals it.
assert_error_text_round_trips() {
  export EXPECTED="$1"
  run caller "ERROR_TEXT=$1" -- 'post_update_to_api failed "$ERROR_TEXT"'
  assert_caller_kept_running
  assert_requests 1
  assert_request 0 'r.json.error === process.env.EXPECTED' true
}

@test "double quotes in the error text are escaped" {
  assert_error_text_round_trips 'command "apt-get install" failed'
}

@test "backslashes in the error text are escaped" {
  assert_error_text_round_trips 'C:\path\to\file \n is not a newline \\ and \u0041 is not A'
}

@test "newlines, carriage returns and tabs in the error text are escaped" {
  assert_error_text_round_trips $'line one\nline two\r\n\tindented'
}

@test "other control characters in the error text are escaped" {
  assert_error_text_round_trips $'bell\a backspace\b formfeed\f vtab\v esc\e[31mred\e[0m \x01\x02\x1f del\x7f'
}

@test "non-ASCII text in the error is kept" {
  assert_error_text_round_trips 'échec: ошибка — 失败 ✗ 🚫'
}

@test "JSON-looking and shell-looking error texts stay plain strings" {
  assert_error_text_round_trips '", "status": "done", "x": "$(touch /tmp/nope) `id` & ${HOME} %s %n'
}

@test "every text field of the start report is escaped" {
  export EXPECTED=$'my "app"\\\n\t'
  run caller "NSAPP=$EXPECTED" "METHOD=$EXPECTED" "var_os=$EXPECTED" "var_version=$EXPECTED" "DISABLEIP6=$EXPECTED" -- post_to_api
  assert_caller_kept_running
  assert_request 0 '[r.json.nsapp, r.json.method, r.json.os_type, r.json.os_version, r.json.disableip6].every((v) => v === process.env.EXPECTED)' true
}

@test "a random id with quotes cannot break the JSON" {
  run caller 'RANDOM_UUID=a"b\c' -- 'post_to_api; post_update_to_api'
  assert_requests 2
  assert_request 0 r.json.random_id 'a"b\c'
  assert_request 1 r.json.random_id 'a"b\c'
}
