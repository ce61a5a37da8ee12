#!/usr/bin/env bats
# --help of the agent and of the installer: a complete usage, also when the script arrives on
# stdin (curl ... | bash -s -- --help), naming every option the script accepts.

setup() { load agent_helper; }

# The options script $1 accepts: the --words of its argument loop's case labels.
accepted_options() { sed -n '/^while (($# > 0)); do/,/^done/p' "$1" | grep -o -E '^ *(-[a-z]|--[a-z]+)( \| --?[a-z]+)*\)' | grep -o -E -- '--?[a-z]+'; }

# Every option in $2 (one a line) appears in the usage text $1 as an option.
assert_all_documented() {
  local option
  while IFS= read -r option; do
    [[ "$1" == *"$option"* ]] || { echo "$option is not in the usage:" >&2; echo "$1" >&2; return 1; }
  done <<<"$2"
}

@test "host-agent.sh --help prints its complete usage, every option it takes, and exits 0" {
  run bash "$AGENT" --help
  [[ "$status" -eq 0 && "$output" == "Usage: host-agent.sh [--once] [--root DIR]"* ]] || { echo "$output" >&2; return 1; }
  [[ "$output" != *"see below"* ]]
  (($(wc -l <<<"$output") >= 15))
  assert_all_documented "$output" "$(accepted_options "$AGENT")"
  # The same from stdin, where the script has no file to read its own comments from.
  run bash -s -- -h <"$AGENT"
  [[ "$status" -eq 0 && "$output" == "Usage: host-agent.sh"* ]] || { echo "$output" >&2; return 1; }
}

@test "the installer's --help works when piped into bash, as it is run, and names every option" {
  run bash -s -- --help <"$INSTALLER"
  [[ "$status" -eq 0 && "$output" == "Usage: curl -fsSL https://<homefleet>/install/agent.sh | sudo bash -s -- --token hfe_..."* ]] || { echo "$output" >&2; return 1; }
  assert_all_documented "$output" "$(accepted_options "$INSTALLER")"
}

@test "an unknown option points at --help" {
  run bash "$AGENT" --frobnicate
  [[ "$status" -eq 2 && "$output" == *"unknown argument: --frobnicate (see --help)"* ]]
}
