#!/usr/bin/env bats
# --fingerprint: the installer and the agent pin a self-signed controller's public key (curl
# --pinnedpubkey) instead of switching verification off; without the pin, or with another, nothing
# is sent past the TLS handshake.

setup_file() {
  load agent_helper
  local tls="$BATS_FILE_TMPDIR/tls"
  mkdir -p "$tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=homefleet.test \
    -keyout "$tls/key.pem" -out "$tls/cert.pem" 2>/dev/null
  # The pin as the README computes it.
  openssl x509 -in "$tls/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64 >"$tls/pin"
  openssl x509 -in "$tls/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 | sed 's/.*= //' >"$tls/pin.hex"
  # A second key: the controller's certificate as re-issued with a new key.
  openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:P-256 2>/dev/null | openssl pkey -pubout -outform der | openssl dgst -sha256 -binary | base64 >"$tls/other.pin"
  MOCK_TLS=("$tls/cert.pem" "$tls/key.pem")
  start_agent_mock
  printf '%s' "${MOCK/http:/https:}" >"$BATS_FILE_TMPDIR/https-url"
}
teardown_file() { load agent_helper; stop_agent_mock; }
setup() {
  load agent_helper
  reset_agent_test
  PIN="$(cat "$BATS_FILE_TMPDIR/tls/pin")"
  OTHER_PIN="$(cat "$BATS_FILE_TMPDIR/tls/other.pin")"
  HTTPS="$(cat "$BATS_FILE_TMPDIR/https-url")"
}

@test "with the right fingerprint the installer enrolls over HTTPS and the agent heartbeats with the pin" {
  run_installer -- --server "$HTTPS" --token "$ENROLL_TOKEN" --fingerprint "$PIN" --root "$ROOT_DIR"
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$STATE/tls_pin")" "sha256//$PIN"
  assert_equal "$(stat -c %a "$STATE/tls_pin")" 600
  run_agent -- --once
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/heartbeat)" 1
}

@test "the fingerprint may be given as sha256//base64 or as hex" {
  run_installer -- --server "$HTTPS" --token "$ENROLL_TOKEN" --fingerprint "sha256//$PIN" --root "$ROOT_DIR"
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  run_installer -- --uninstall --root "$ROOT_DIR"
  run_installer -- --server "$HTTPS" --token "$ENROLL_TOKEN" --fingerprint "$(cat "$BATS_FILE_TMPDIR/tls/pin.hex")" --root "$ROOT_DIR"
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$STATE/tls_pin")" "sha256//$PIN"
}

@test "a different fingerprint stops the installer before anything reaches the server" {
  run_installer -- --server "$HTTPS" --token "$ENROLL_TOKEN" --fingerprint "sha256//$(printf x | openssl dgst -sha256 -binary | base64)" --root "$ROOT_DIR"
  [[ "$status" -eq 1 && "$output" == *"--fingerprint"* ]]
  assert_equal "$(request_count)" 0
  [[ ! -e "$INSTALLED_AGENT" ]]
}

@test "without a fingerprint a self-signed controller is not trusted" {
  run_installer -- --server "$HTTPS" --token "$ENROLL_TOKEN" --root "$ROOT_DIR"
  [[ "$status" -eq 1 ]]
  assert_equal "$(request_count)" 0
}

@test "an agent whose pinned key no longer matches sends nothing" {
  run_installer -- --server "$HTTPS" --token "$ENROLL_TOKEN" --fingerprint "$PIN" --root "$ROOT_DIR"
  : >"$MOCK_DIR/requests.jsonl"
  printf 'sha256//%s\n' "$(printf y | openssl dgst -sha256 -binary | base64)" >"$STATE/tls_pin"
  run_agent -- --once
  [[ "$status" -eq 75 ]]
  assert_equal "$(request_count)" 0
}

# The agent pinned the key of the old certificate; the server (the mock) now presents another.
installed_with_stale_pin() {
  run_installer -- --server "$HTTPS" --token "$ENROLL_TOKEN" --fingerprint "$PIN" --root "$ROOT_DIR"
  [[ "$status" -eq 0 ]] || { echo "$output" >&2; return 1; }
  printf 'sha256//%s\n' "$OTHER_PIN" >"$STATE/tls_pin"
  : >"$MOCK_DIR/requests.jsonl"
}

@test "a certificate that no longer matches the pin is named a pin mismatch, with the way to re-pin" {
  installed_with_stale_pin
  run_agent -- --once
  [[ "$status" -eq 75 ]] || { echo "$status $output" >&2; return 1; }
  [[ "$output" == *"TLS pin mismatch"* && "$output" == *"sha256//$OTHER_PIN"* ]] || { echo "$output" >&2; return 1; }
  [[ "$output" == *"re-pin as root: $INSTALLED_AGENT --root $ROOT_DIR --repin <sha256>"* ]] || { echo "$output" >&2; return 1; }
  [[ "$output" != *"did not answer"* ]]
  assert_equal "$(request_count)" 0
}

@test "--repin writes the new pin (0600), says what it did, restarts the service, and the agent reports again" {
  installed_with_stale_pin
  : >"$SYSTEMCTL_LOG"
  run_agent -- --repin "$PIN"
  [[ "$status" -eq 0 ]] || { echo "$status $output" >&2; return 1; }
  [[ "$output" == *"pinned sha256//$PIN for $HTTPS in $STATE/tls_pin (was sha256//$OTHER_PIN)"* ]] || { echo "$output" >&2; return 1; }
  assert_equal "$(cat "$STATE/tls_pin")" "sha256//$PIN"
  assert_equal "$(stat -c %a "$STATE/tls_pin")" 600
  assert_equal "$(cat "$SYSTEMCTL_LOG")" 'try-restart homefleet-agent.service'
  run_agent -- --once
  [[ "$status" -eq 0 ]] || { echo "$status $output" >&2; return 1; }
  assert_equal "$(request_count /api/agent/heartbeat)" 1
  # The hex form of the same hash is taken too.
  run_agent -- --repin "$(cat "$BATS_FILE_TMPDIR/tls/pin.hex")"
  [[ "$status" -eq 0 ]]
  assert_equal "$(cat "$STATE/tls_pin")" "sha256//$PIN"
}

@test "--repin refuses a malformed pin, a missing one, and an http:// server, and changes nothing" {
  installed_with_stale_pin
  local arg
  for arg in 'abc' "sha256//${PIN:0:20}" "$PIN; rm -rf /" ''; do
    run_agent -- --repin "$arg"
    [[ "$status" -eq 2 ]] || { echo "'$arg': $status $output" >&2; return 1; }
  done
  run_agent -- --repin
  [[ "$status" -eq 2 && "$output" == *"--repin needs"* ]]
  assert_equal "$(cat "$STATE/tls_pin")" "sha256//$OTHER_PIN"
  printf '%s\n' "$MOCK" >"$STATE/server_url"
  run_agent -- --repin "$PIN"
  [[ "$status" -eq 1 && "$output" == *"no certificate to pin"* ]]
  assert_equal "$(cat "$STATE/tls_pin")" "sha256//$OTHER_PIN"
}
