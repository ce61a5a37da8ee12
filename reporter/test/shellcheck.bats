#!/usr/bin/env bats
# The reporter and this suite's helper are shellcheck-clean.

setup() { load test_helper; }

@test "shellcheck reports nothing on usage-report.sh" {
  run shellcheck --shell=bash "$REPORTER"
  [[ "$status" -eq 0 && -z "$output" ]] || { echo "$output" >&2; return 1; }
}

@test "shellcheck reports nothing on the test helper" {
  run shellcheck --shell=bash -e SC2034,SC2154 "$BATS_TEST_DIRNAME/test_helper.bash"
  [[ "$status" -eq 0 && -z "$output" ]] || { echo "$output" >&2; return 1; }
}
