// The agents of test/bench/campaigns.bench.ts, in a process of their own so that their work is not
// counted against the server's or the measuring process's event loop: one keep-alive socket per host
// long-polling GET /api/agent/commands?wait=25 on the server the bench started (127.0.0.1 only),
// and a fake hypervisor that "runs" each command for 20–120 ms and reports exit 0. Each command's
// arrival is written to stdout as a JSON line {operation_id, at} (ms since the epoch).
// argv: <server url> <file with a JSON list of host tokens>. Ends on SIGTERM.
import fs from 'node:fs';
import http from 'node:http';

const [base, tokensFile] = process.argv.slice(2);
const url = new URL(base);
if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) throw new Error('the bench agents talk only to loopback');
const tokens = JSON.parse(fs.readFileSync(tokensFile, 'utf8'));
let running = true;
process.on('SIGTERM', () => {
  running = false;
  process.exit(0);
});

function request(method, path, token, agent, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(new URL(path, base), { method, agent, headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, body: text && res.headers['content-type']?.includes('json') ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

for (const token of tokens) {
  const polls = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const results = new http.Agent({ keepAlive: true, maxSockets: 4 });
  void (async () => {
    while (running) {
      const res = await request('GET', '/api/agent/commands?wait=25', token, polls).catch(() => undefined);
      if (!res) {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      for (const command of res.body?.commands ?? []) {
        process.stdout.write(`${JSON.stringify({ operation_id: command.operation_id, at: Date.now() })}\n`);
        setTimeout(() => {
          void request('POST', `/api/agent/operations/${command.operation_id}/result`, token, results, { exit_code: 0, output: `${command.action} ${command.vmid}: ok` }).catch(() => undefined);
        }, 20 + Math.random() * 100);
      }
    }
  })();
}
