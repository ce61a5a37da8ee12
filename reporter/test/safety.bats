#!/usr/bin/env bats
# Sourcing the reporter is safe: strict modes, nothing printed, nothing leaked, always 0.

setup_file() { load test_helper; start_mock; }
teardown_file() { load test_helper; stop_mock; }
setup() { load test_helper; reset_test; }

# Every function in a row, against a working and a broken server.
ALL_CALLS='post_to_api; post_to_api_vm; post_update_to_api done'

@test "under set -u with every variable unset, nothing fails and nothing is sent" {
  run timeout --kill-after=2 "$CALLER_LIMIT" env -i "$BASH_BIN" --noprofile --norc -c \
    "set -u; source '$REPORTER'; $ALL_CALLS; post_update_to_api; echo caller-still-running"
  assert_caller_kept_running
  assert_requests 0
}

@test "under set -euo pipefail with every variable unset but the base URL, nothing fails" {
  run timeout --kill-after=2 "$CALLER_LIMIT" env -i "PATH=$TEST_PATH" "USAGE_API_BASE=$MOCK/ok" "$BASH_BIN" --noprofile --norc -c \
    "set -euo pipefail; source '$REPORTER'; $ALL_CALLS; echo caller-still-running"
  assert_caller_kept_running
}

@test "every function returns 0, whether it sent, skipped or failed" {
  run caller -- 'post_to_api; echo "$?"; post_to_api_vm; echo "$?"; post_update_to_api; echo "$?"'
  [[ "$output" == $'0\n0\n0\ncaller-still-running' ]]
  run caller "USAGE_API_BASE=$MOCK/fail" DIAGNOSTICS=no -- 'post_to_api; echo "$?"; post_update_to_api; echo "$?"'
  [[ "$output" == $'0\n0\ncaller-still-running' ]]
}

@test "an ERR trap with set -E is never triggered, even when the server is down" {
  local port
  port="$(node "$FIXTURES/free-port.mjs")"
  run caller "USAGE_API_BASE=http://127.0.0.1:$port" -- "set -E; trap 'echo ERR-TRAP-FIRED' ERR; $ALL_CALLS"
  assert_caller_kept_running
  rm "$BATS_TEST_TMPDIR/diagnostics"
  run caller "PATH=$BATS_TEST_TMPDIR/empty" -- "set -E; trap 'echo ERR-TRAP-FIRED' ERR; $ALL_CALLS"
  assert_caller_kept_running
}

@test "nothing is printed on stdout or stderr when the report is delivered" {
  run caller -- "$ALL_CALLS"
  assert_caller_kept_running
  assert_requests 3
}

@test "nothing is printed when the server fails, hangs or is down" {
  local port
  port="$(node "$FIXTURES/free-port.mjs")"
  for base in "$MOCK/fail" "$MOCK/hang" "http://127.0.0.1:$port" "$MOCK/loop" "not a url"; do
    run caller "USAGE_API_BASE=$base" USAGE_API_TIMEOUT=1 -- "$ALL_CALLS"
    assert_caller_kept_running
  done
}

# A script that snapshots every variable (but bash's own moving ones), runs $1, and prints the
# lines of `declare -p` that are new or changed.
write_snapshot_script() {
  cat >"$BATS_TEST_TMPDIR/snapshot.sh" <<SCRIPT
snapshot() { declare -p | grep -Ev '^declare -[-a-zA-Z]* (BASH_[A-Z_]*|FUNCNAME|PIPESTATUS|_|before|after|options_before)(=|\$)'; }
before="\$(snapshot)"
options_before="\$-\$(shopt | tr -s ' \t' ' ')"
$1
after="\$(snapshot)"
diff <(echo "\$before") <(echo "\$after") | grep '^>' || true
[[ "\$options_before" == "\$-\$(shopt | tr -s ' \t' ' ')" ]] || echo "shell options changed"
SCRIPT
}

@test "sourcing defines functions only: no variable is set and no shell option changes" {
  write_snapshot_script "source '$REPORTER'"
  run caller -- "source '$BATS_TEST_TMPDIR/snapshot.sh'"
  assert_caller_kept_running
}

@test "the functions leak no variables beyond the documented POST_UPDATE_DONE" {
  write_snapshot_script "$ALL_CALLS; post_update_to_api failed \$'bad \"text\"\\n'"
  run caller -- "source '$BATS_TEST_TMPDIR/snapshot.sh'"
  [[ "$output" == $'> declare -- POST_UPDATE_DONE="true"\ncaller-still-running' ]]
  assert_requests 3
}

@test "post_to_api_vm sets the documented DIAGNOSTICS from the settings file, and nothing else" {
  printf 'DIAGNOSTICS=no\n' >"$BATS_TEST_TMPDIR/diagnostics"
  write_snapshot_script post_to_api_vm
  run caller -- "source '$BATS_TEST_TMPDIR/snapshot.sh'"
  [[ "$output" == $'> declare -x DIAGNOSTICS="no"\ncaller-still-running' ]]
}

@test "the caller's variables with everyday names are left untouched" {
  run caller -- 'status=keep; error=keep; json=keep; i=keep; c=keep; line=keep; value=keep; file=keep; code=keep; timeout=keep
    post_to_api; post_to_api_vm; post_update_to_api done oops
    echo "$status $error $json $i $c $line $value $file $code $timeout"'
  [[ "$output" == $'keep keep keep keep keep keep keep keep keep keep\ncaller-still-running' ]]
  assert_requests 3
}

@test "the caller's BASH_REMATCH survives the calls" {
  run caller -- '[[ abc =~ (b) ]]; post_to_api; post_to_api_vm; post_update_to_api; echo "${BASH_REMATCH[1]}"'
  [[ "$output" == $'b\ncaller-still-running' ]]
}

@test "sourcing the file twice keeps the once-per-run update rule" {
  run caller -- "post_update_to_api done; source '$REPORTER'; post_update_to_api failed"
  assert_caller_kept_running
  assert_requests 1
}
