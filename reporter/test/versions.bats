#!/usr/bin/env bats
# version_lt (lib/common.sh), which the agent's upgrade checks and the installer use: SemVer 2.0
# precedence (semver.org, section 11), with the specification's own examples.

setup() {
  load agent_helper
  # shellcheck source=reporter/lib/common.sh
  source "$REPORTER_DIR/lib/common.sh"
}

# Every version in $@ is lower than every one after it, and not lower than itself or any before it.
assert_ascending() {
  local i j
  local -a v=("$@")
  for ((i = 0; i < ${#v[@]}; i++)); do
    for ((j = 0; j < ${#v[@]}; j++)); do
      if ((i < j)); then
        version_lt "${v[i]}" "${v[j]}" || { echo "expected ${v[i]} < ${v[j]}" >&2; return 1; }
      elif version_lt "${v[i]}" "${v[j]}"; then
        echo "expected ${v[i]} >= ${v[j]}" >&2
        return 1
      fi
    done
  done
}

@test "the specification's precedence example: 1.0.0-alpha < 1.0.0-alpha.1 < ... < 1.0.0" {
  assert_ascending 1.0.0-alpha 1.0.0-alpha.1 1.0.0-alpha.beta 1.0.0-beta 1.0.0-beta.2 1.0.0-beta.11 1.0.0-rc.1 1.0.0
}

@test "major, minor and patch compare as numbers: 1.0.0 < 2.0.0 < 2.1.0 < 2.1.1, 1.9.0 < 1.10.0" {
  assert_ascending 1.0.0 2.0.0 2.1.0 2.1.1
  assert_ascending 1.9.0 1.10.0 10.0.0
  assert_ascending 0.9.99 1.0.0
  assert_ascending 1.2.3 1.2.12345678901234567890
}

@test "a pre-release is below its release: 1.2.0-rc.1 < 1.2.0, and 1.2.0-rc1 < 1.2.0 (sort -V said otherwise)" {
  assert_ascending 1.2.0-rc.1 1.2.0
  assert_ascending 1.2.0-rc1 1.2.0 1.2.1-alpha 1.2.1
}

@test "numeric identifiers compare as numbers and below alphanumeric ones; alphanumerics in ASCII order" {
  assert_ascending 1.0.0-2 1.0.0-10 1.0.0-alpha
  assert_ascending 1.0.0-rc.2 1.0.0-rc.10
  # ASCII: upper case before lower case, digits before letters, hyphen before digits.
  assert_ascending 1.0.0-Beta 1.0.0-alpha 1.0.0-beta
  assert_ascending 1.0.0-a-b 1.0.0-a1 1.0.0-ab
}

@test "a shorter set of identifiers is lower when all before are equal" {
  assert_ascending 1.0.0-alpha 1.0.0-alpha.1 1.0.0-alpha.1.1
}

@test "build metadata is ignored: neither of two versions that differ only in it is lower" {
  run ! version_lt 1.0.0+build.2 1.0.0+build.1
  run ! version_lt 1.0.0+build.1 1.0.0+build.2
  run ! version_lt 1.0.0 1.0.0+20130313144700
  assert_ascending 1.0.0-beta+exp.sha.5114f85 1.0.0+21AF26D3
}

@test "equal versions are not lower than each other" {
  run ! version_lt 1.2.3 1.2.3
  run ! version_lt 1.2.3-rc.1 1.2.3-rc.1
}

@test "the agent and the installer call this one version_lt; neither uses sort -V" {
  run grep -n -e 'sort -V' -e 'sort --version-sort' "$REPORTER_DIR/host-agent.sh" "$REPORTER_DIR/install-agent.sh" "$REPORTER_DIR/lib/common.sh"
  [[ "$status" -eq 1 ]] || { echo "$output" >&2; return 1; }
}

@test "version_lt leaves the caller's REPLY as it was (the upgrade check names the version it read)" {
  REPLY=1.0.1
  version_lt 1.0.0 "$REPLY"
  assert_equal "$REPLY" 1.0.1
}
