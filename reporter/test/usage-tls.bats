#!/usr/bin/env bats
# The usage reporter against a self-signed HTTPS server (as homefleet's own is): USAGE_CA_FILE and
# USAGE_PIN let the report through; without them nothing is sent past the handshake. Failures are
# ignored (part B), unless USAGE_STRICT=yes asks to hear of them: then stderr says why and the
# function returns 1.

setup_file() {
  load test_helper
  local tls="$BATS_FILE_TMPDIR/tls"
  mkdir -p "$tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$tls/key.pem" -out "$tls/cert.pem" 2>/dev/null
  openssl x509 -in "$tls/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64 >"$tls/pin"
  openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:P-256 2>/dev/null | openssl pkey -pubout -outform der | openssl dgst -sha256 -binary | base64 >"$tls/other.pin"
  MOCK_TLS=("$tls/cert.pem" "$tls/key.pem")
  start_mock
}
teardown_file() { load test_helper; stop_mock; }
setup() {
  load test_helper
  reset_test
  TLS="$BATS_FILE_TMPDIR/tls"
  HTTPS="https://127.0.0.1:$MOCK_PORT"
}

@test "without a CA file or a pin nothing reaches a self-signed server, and the caller hears nothing (part B)" {
  run caller "USAGE_API_BASE=$HTTPS/ok" -- post_to_api
  assert_caller_kept_running
  assert_requests 0
}

@test "USAGE_CA_FILE: the report is checked against that certificate and delivered" {
  run caller "USAGE_API_BASE=$HTTPS/ok" "USAGE_CA_FILE=$TLS/cert.pem" -- 'post_to_api; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 2
  assert_request 0 'r.path' /ok/upload
  assert_request 1 'r.path' /ok/upload/updatestatus
}

@test "USAGE_PIN: the server's key must be the pinned one; another pin sends nothing" {
  run caller "USAGE_API_BASE=$HTTPS/ok" "USAGE_PIN=sha256//$(cat "$TLS/pin")" -- post_to_api
  assert_caller_kept_running
  assert_requests 1
  run caller "USAGE_API_BASE=$HTTPS/ok" "USAGE_PIN=sha256//$(cat "$TLS/other.pin")" -- post_to_api
  assert_caller_kept_running
  assert_requests 1
}

@test "USAGE_STRICT=yes: an untrusted certificate is an error the caller sees, on stderr and in the status" {
  run caller "USAGE_API_BASE=$HTTPS/ok" USAGE_STRICT=yes -- 'post_to_api || { echo "status $?"; exit 3; }'
  [[ "$status" -eq 3 && "$output" == *"usage-report: $HTTPS/ok/upload: the server's certificate is not trusted (set USAGE_CA_FILE to its certificate, or USAGE_PIN)"* && "$output" == *"status 1"* ]] ||
    { echo "$status: $output" >&2; return 1; }
  assert_requests 0
}

@test "USAGE_STRICT=yes: a pin mismatch, a refusal and a server that is down each say why" {
  run caller "USAGE_API_BASE=$HTTPS/ok" USAGE_STRICT=yes "USAGE_PIN=sha256//$(cat "$TLS/other.pin")" -- post_to_api
  [[ "$status" -eq 1 && "$output" == *"does not match USAGE_PIN"* ]] || { echo "$status: $output" >&2; return 1; }
  run caller "USAGE_API_BASE=$HTTPS/fail" USAGE_STRICT=yes "USAGE_CA_FILE=$TLS/cert.pem" -- 'post_update_to_api failed "oops"'
  [[ "$status" -eq 1 && "$output" == *"$HTTPS/fail/upload/updatestatus answered 500"* ]] || { echo "$status: $output" >&2; return 1; }
  run caller "USAGE_API_BASE=https://127.0.0.1:1/x" USAGE_STRICT=yes -- post_to_api_vm
  [[ "$status" -eq 1 && "$output" == *"https://127.0.0.1:1/x/upload did not answer"* ]] || { echo "$status: $output" >&2; return 1; }
  run caller "USAGE_API_BASE=$HTTPS/ok" USAGE_STRICT=yes "USAGE_CA_FILE=$BATS_TEST_TMPDIR/missing.pem" -- post_to_api
  [[ "$status" -eq 1 && "$output" == *"USAGE_CA_FILE $BATS_TEST_TMPDIR/missing.pem cannot be read"* ]] || { echo "$status: $output" >&2; return 1; }
  run caller "USAGE_API_BASE=$HTTPS/ok" USAGE_STRICT=yes "USAGE_PIN=not-a-pin" -- post_to_api
  [[ "$status" -eq 1 && "$output" == *"USAGE_PIN must be sha256//"* ]] || { echo "$status: $output" >&2; return 1; }
}

@test "USAGE_STRICT=yes: a delivered report prints nothing and returns 0" {
  run caller "USAGE_API_BASE=$HTTPS/ok" USAGE_STRICT=yes "USAGE_CA_FILE=$TLS/cert.pem" -- 'post_to_api; post_update_to_api done'
  assert_caller_kept_running
  assert_requests 2
}

@test "the reporter copied without lib/ beside it sends nothing and never stops its caller; strict mode says why" {
  mkdir -p "$BATS_TEST_TMPDIR/alone"
  cp "$REPORTER" "$BATS_TEST_TMPDIR/alone/usage-report.sh"
  REPORTER="$BATS_TEST_TMPDIR/alone/usage-report.sh"
  run caller "USAGE_API_BASE=$HTTPS/ok" "USAGE_CA_FILE=$TLS/cert.pem" -- 'post_to_api; post_update_to_api done'
  assert_caller_kept_running
  run caller "USAGE_API_BASE=$HTTPS/ok" "USAGE_CA_FILE=$TLS/cert.pem" USAGE_STRICT=yes -- post_to_api
  [[ "$status" -eq 1 && "$output" == *"lib/json-string.sh was not found beside usage-report.sh"* ]] || { echo "$status: $output" >&2; return 1; }
  assert_requests 0
}
