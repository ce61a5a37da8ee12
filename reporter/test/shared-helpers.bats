#!/usr/bin/env bats
# One copy of the shell helpers (reporter/lib/): the agent, the installer and the usage reporter
# define none of their own, and the built server serves the agent and the installer assembled from
# exactly these sources (the release manifest describing the bytes it serves).

ROOT="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"

setup_file() {
  load agent_helper
  cd "$ROOT"
  node build/build.mjs --if-missing 3>&-
  local log="$BATS_FILE_TMPDIR/server.log" i
  DB_PATH="$BATS_FILE_TMPDIR/homefleet.db" PORT=0 HOST=127.0.0.1 LOG_LEVEL=info node dist/server/main.js >"$log" 2>&1 3>&- &
  export SERVER_PID=$!
  for ((i = 0; i < 200; i++)); do
    grep -q 'listening on http://127.0.0.1:' "$log" && break
    sleep 0.05
  done
  SERVER="$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | head -1 | sed 's/^listening on //')"
  [[ -n "$SERVER" ]] || { cat "$log" >&2; return 1; }
  export SERVER
}

teardown_file() {
  if [[ -n "${SERVER_PID:-}" ]]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}

setup() { load agent_helper; }

@test "every helper is defined once, in reporter/lib/, and no script defines one of its own" {
  local name file defined
  local -a names
  mapfile -t names < <(sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)() {.*/\1/p' "$REPORTER_DIR"/lib/*.sh)
  ((${#names[@]} >= 10)) || { echo "only ${#names[@]} helpers found" >&2; return 1; }
  for name in "${names[@]}"; do
    defined="$(grep -l -E "^[[:space:]]*(function[[:space:]]+)?$name[[:space:]]*\(\)" "$REPORTER_DIR"/*.sh "$REPORTER_DIR"/lib/*.sh)"
    assert_equal "$defined" "$(grep -l -E "^$name\(\) \{" "$REPORTER_DIR"/lib/*.sh)"
    [[ "$defined" != *$'\n'* ]] || { echo "$name is defined in more than one file: $defined" >&2; return 1; }
  done
  # The copies the scripts used to carry, under their old names too.
  for name in __usage_json_string json_get_string json_get_int json_objects json_objects_after; do
    run grep -rn -E "^[[:space:]]*$name\(\)" "$REPORTER_DIR" --include='*.sh'
    [[ "$status" -eq 1 ]] || { echo "$output" >&2; return 1; }
  done
  # One JSON reader: the perl program is in lib/common.sh only.
  assert_equal "$(grep -l -r 'JSON::PP->new' "$REPORTER_DIR" --include='*.sh')" "$REPORTER_DIR/lib/common.sh"
}

@test "each script includes the helpers it uses (the agent and the installer both, the usage reporter json-string.sh)" {
  assert_equal "$(grep -c '# homefleet:include$' "$REPORTER_DIR/host-agent.sh")" 2
  assert_equal "$(grep -c '# homefleet:include$' "$REPORTER_DIR/install-agent.sh")" 2
  grep -q 'lib/json-string.sh' "$REPORTER_DIR/usage-report.sh"
  # What the tests run is whole: no include line is left in the assembled files.
  run grep -c 'homefleet:include' "$AGENT" "$INSTALLER"
  assert_equal "$output" "$AGENT:0"$'\n'"$INSTALLER:0"
}

@test "the built server serves the installer assembled from these sources, only its default --server filled in" {
  curl -fsS "$SERVER/install/agent.sh" -o "$BATS_TEST_TMPDIR/served-installer.sh"
  sed "s|^HOMEFLEET_SERVER_DEFAULT=\"\"\$|HOMEFLEET_SERVER_DEFAULT=$SERVER|" "$INSTALLER" >"$BATS_TEST_TMPDIR/expected-installer.sh"
  cmp "$BATS_TEST_TMPDIR/served-installer.sh" "$BATS_TEST_TMPDIR/expected-installer.sh"
  run bash "$BATS_TEST_TMPDIR/served-installer.sh" --help
  [[ "$status" -eq 0 && "$output" == Usage:* && "$output" == *"--fingerprint PIN"* ]] || { echo "$output" >&2; return 1; }
}

@test "the built server serves the agent assembled from these sources, and the manifest's SHA-256 and size are of those bytes" {
  local version sha size
  version="$(sed -n 's/^HOMEFLEET_AGENT_VERSION="\(.*\)"$/\1/p' "$AGENT")"
  curl -fsS "$SERVER/api/agent/releases/$version/host-agent.sh" -o "$BATS_TEST_TMPDIR/served-agent.sh"
  cmp "$BATS_TEST_TMPDIR/served-agent.sh" "$AGENT"
  curl -fsS "$SERVER/api/agent/releases/manifest.json" -o "$BATS_TEST_TMPDIR/manifest.json"
  read -r sha size < <(node_e '
    const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const a = m.agents.find((x) => x.version === process.argv[2]);
    console.log(a.sha256, a.size);' "$BATS_TEST_TMPDIR/manifest.json" "$version")
  assert_equal "$sha" "$(sha256sum "$AGENT" | cut -d' ' -f1)"
  assert_equal "$size" "$(stat -c %s "$AGENT")"
}
