#!/usr/bin/env node
// `npm run lint`: the checks that need Debian tools rather than npm packages, so `npm test` needs
// only Node while .ci/run installs these tools and runs this step too:
// - shellcheck (apt-get install shellcheck) over every shell script homefleet ships or runs: the usage
//   reporter, the host agent and its installer, the bats suite's helpers and fakes, .ci/run, and the release workflow's `run:` scripts;
// - `systemd-analyze verify` (apt-get install systemd) of the sample unit build/homefleet.service.
// Exits non-zero on any finding, and when a tool is missing.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';

const root = path.resolve(import.meta.dirname, '..');
const shellcheck = process.env.SHELLCHECK ?? 'shellcheck';

const systemdAnalyze = process.env.SYSTEMD_ANALYZE ?? 'systemd-analyze';

for (const [tool, pkg] of [[shellcheck, 'shellcheck'], [systemdAnalyze, 'systemd']]) {
  if (spawnSync(tool, ['--version'], { encoding: 'utf8' }).status !== 0) {
    console.error(`lint: ${tool} not found; install it (Debian: apt-get install ${pkg})`);
    process.exit(2);
  }
}

/** [label, shellcheck arguments, script text or undefined for a file] */
const checks = [
  // -x: each script follows its include of reporter/lib/ (the files the server inlines when it serves them).
  ['reporter/usage-report.sh', ['--shell=bash', '-x', 'reporter/usage-report.sh']],
  ['reporter/lib/*.sh', ['--shell=bash', 'reporter/lib/common.sh', 'reporter/lib/json-string.sh']],
  // Variables the helper sets are used by the .bats files that load it, and BATS_* come from bats.
  // -x: both helpers follow their include of reporter/test/node_e.bash.
  ['reporter/test/test_helper.bash', ['--shell=bash', '-x', '-e', 'SC2034,SC2154', 'reporter/test/test_helper.bash']],
  ['reporter/host-agent.sh, reporter/install-agent.sh', ['--shell=bash', '-x', 'reporter/host-agent.sh', 'reporter/install-agent.sh']],
  [
    'reporter/test/agent_helper.bash and the fake hypervisor commands (agent-bin/, deploy-bin/)',
    [
      '--shell=bash', '-x', '-e', 'SC2034,SC2154', 'reporter/test/agent_helper.bash',
      ...['systemctl', 'qm', 'pct', 'pvesh', 'pvesm', 'ip', 'journalctl'].map((f) => `reporter/test/fixtures/agent-bin/${f}`),
      ...['qm', 'pct', 'pvesh', 'pvesm'].map((f) => `reporter/test/fixtures/deploy-bin/${f}`),
    ],
  ],
  ['.ci/run', ['--shell=bash', '.ci/run']],
];
const workflowFile = '.github/workflows/release.yml';
const workflow = YAML.parse(fs.readFileSync(path.join(root, workflowFile), 'utf8'));
for (const [job, { steps }] of Object.entries(workflow.jobs)) {
  for (const step of steps.filter((s) => s.run)) {
    // Expressions are filled in by Actions before the shell runs; stand in a quoted variable.
    const script = `#!/usr/bin/env bash\n${step.run.replace(/\$\{\{[^}]*\}\}/g, '"$EXPR"')}`;
    checks.push([`${workflowFile} ${job}: ${step.name ?? step.run.split('\n')[0]}`, ['--shell=bash', '-'], script]);
  }
}

let failed = 0;
for (const [label, args, input] of checks) {
  report(label, spawnSync(shellcheck, args, { cwd: root, input, encoding: 'utf8' }));
}

// Where node lives is the installation's business; check the unit against this machine's node.
const unitDir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-unit-'));
try {
  const unit = path.join(unitDir, 'homefleet.service');
  const text = fs.readFileSync(path.join(root, 'build/homefleet.service'), 'utf8');
  fs.writeFileSync(unit, text.replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath}`));
  report('build/homefleet.service (systemd-analyze verify)', spawnSync(systemdAnalyze, ['verify', unit], { encoding: 'utf8', timeout: 30_000 }));
} finally {
  fs.rmSync(unitDir, { recursive: true, force: true });
}

console.log(`lint: ${checks.length + 1 - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

function report(label, result) {
  const output = `${result.stdout}${result.stderr}`.trim();
  if (result.status === 0 && output === '') {
    console.log(`ok      ${label}`);
  } else {
    failed++;
    console.log(`FAILED  ${label}\n${output}`);
  }
}
