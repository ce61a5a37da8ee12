// The floor of test/bench/upload.bench.ts: a bare node:http server, in its own process, that streams
// each POST's body to a file while hashing it (SHA-256), and answers the size and hash. No framework,
// no session, no multipart parsing, no database: what any server taking an upload must at least do.
//   DIR=... node test/bench/upload-floor.mjs   (prints the port it listens on)
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const dir = process.env.DIR;
let serial = 0;
const server = http.createServer(async (req, res) => {
  const file = path.join(dir, `floor-${++serial}.partial`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk, _encoding, done) {
      size += chunk.length;
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(req, meter, fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }));
    const sha256 = hash.digest('hex');
    fs.renameSync(file, path.join(dir, sha256));
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ size, sha256 }));
  } catch (err) {
    fs.rmSync(file, { force: true });
    res.writeHead(400).end(String(err));
  }
});
server.requestTimeout = 0;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
