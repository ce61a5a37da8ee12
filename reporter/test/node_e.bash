# shellcheck shell=bash
# node_e SCRIPT [ARG...]: what `node -e SCRIPT ARG...` prints and exits with, for the tests' small
# scripts (reading what a mock recorded, building a command's JSON). Under build/bats.mjs (npm test,
# npm run test:reporter) its runner runs them in its own process (build/bats-scripts.mjs), over the
# socket it names in HOMEFLEET_BATS_NODE: a node start costs 17 ms of CPU, and the suite asks hundreds
# of times. The script gets argv, the environment, console, process.stdout/stderr/exit and require;
# not stdin or the working folder (pass absolute paths), and it must finish synchronously. Run by
# bats alone, it is a node of its own.
node_e() {
  if [[ -z "${HOMEFLEET_BATS_NODE:-}" ]]; then
    node -e "$@"
    return
  fi
  local script="$1" out err code
  shift
  {
    IFS= read -r -d '' out && IFS= read -r -d '' err && IFS= read -r -d '' code
  } < <({ printf '%s\0' "$script" "$#" "$@"; env -0; } | curl -sS --max-time 10 --unix-socket "$HOMEFLEET_BATS_NODE" --data-binary @- http://bats-runner/) || true
  [[ "${code:-}" =~ ^[0-9]+$ ]] || { echo "node_e: no answer from the bats runner at $HOMEFLEET_BATS_NODE" >&2; return 1; }
  printf '%s' "$out"
  printf '%s' "$err" >&2
  return "$code"
}
