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

@test "shellcheck reports nothing on host-agent.sh and install-agent.sh" {
  run shellcheck --shell=bash "$BATS_TEST_DIRNAME/../host-agent.sh" "$BATS_TEST_DIRNAME/../install-agent.sh"
  [[ "$status" -eq 0 && -z "$output" ]] || { echo "$output" >&2; return 1; }
}

@test "shellcheck reports nothing on the agent test helper and the fake commands" {
  run shellcheck --shell=bash -e SC2034,SC2154 "$BATS_TEST_DIRNAME/agent_helper.bash" "$BATS_TEST_DIRNAME"/fixtures/agent-bin/{systemctl,qm,pct,ip}
  [[ "$status" -eq 0 && -z "$output" ]] || { echo "$output" >&2; return 1; }
}
