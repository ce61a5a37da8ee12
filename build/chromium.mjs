// The one place that picks the Chromium the browser tests, screenshots and dashboard bench drive.
//
// The Chromium build that the npm package @sparticuz/chromium ships inside its tarball (a
// devDependency), so `npm ci && npm test` works on a machine with only Node and every machine runs the
// same browser. It is a headless-only build: the browser tests cost a third of the CPU they cost in
// Debian's full /usr/bin/chromium (78 against 270 CPU-seconds for the e2e files on 2 cores).
// HOMEFLEET_CHROMIUM=system takes /usr/bin/chromium (to see a problem in a full browser), and any
// other value is taken as the path of a Chromium executable.
//
// The npm build is brotli-compressed; it is unpacked once into node_modules/.cache (into a temporary
// folder renamed into place, so parallel test processes never see half a file), together with the
// NSS libraries it links against (the package's Amazon Linux set: a bare Debian has no libnss3) and
// a font, which the launch options point it at.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

export const root = path.resolve(import.meta.dirname, '..');
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Switches off everything that would reach out to the network; headless. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Which Chromium HOMEFLEET_CHROMIUM calls for: 'npm' (the default), 'system', or an executable's path. */
export function chromiumChoice(env = process.env) {
  const wanted = env.HOMEFLEET_CHROMIUM ?? '';
  if (wanted === 'npm' || wanted === 'system') return wanted;
  if (wanted !== '') return wanted;
  return 'npm';
}

/** playwright-core launch options for the chosen Chromium (unpacking the npm build on first use). */
export async function chromiumLaunchOptions(env = process.env) {
  const choice = chromiumChoice(env);
  if (choice === 'system') return { executablePath: SYSTEM_CHROMIUM, args: ARGS };
  if (choice !== 'npm') return { executablePath: choice, args: ARGS };
  const dir = await unpackNpmChromium();
  const libs = path.join(dir, 'lib');
  return {
    executablePath: path.join(dir, 'chromium'),
    args: ARGS,
    env: {
      ...env,
      LD_LIBRARY_PATH: env.LD_LIBRARY_PATH ? `${libs}:${env.LD_LIBRARY_PATH}` : libs,
      FONTCONFIG_PATH: dir,
      HOME: env.HOME ?? dir,
      // Under a C or POSIX locale (LANG=C.UTF-8, as CI machines run) this build reports the language
      // `en-US@posix`, which Intl rejects, so code that formats dates (uPlot) throws when it loads.
      LANG: 'en_US.UTF-8',
      LANGUAGE: 'en_US',
    },
  };
}

let unpacking;
/** The folder holding the npm build's `chromium`, `lib/` and `fonts.conf`, unpacked once per package version. */
export function unpackNpmChromium() {
  unpacking ??= unpack();
  return unpacking;
}

async function unpack() {
  const require = createRequire(path.join(root, 'package.json'));
  // Its exports map hides package.json; the entry point is build/cjs/index.cjs inside the package.
  const pkgDir = path.resolve(path.dirname(require.resolve('@sparticuz/chromium')), '..', '..');
  const { version } = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
  const bin = path.join(pkgDir, 'bin');
  const cache = path.join(root, 'node_modules', '.cache', 'homefleet-chromium');
  const dir = path.join(cache, version);
  if (fs.existsSync(path.join(dir, 'chromium'))) return dir;

  fs.mkdirSync(cache, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(cache, `.${version}-`));
  try {
    await pipeline(fs.createReadStream(path.join(bin, 'chromium.br')), zlib.createBrotliDecompress(), fs.createWriteStream(path.join(tmp, 'chromium'), { mode: 0o755 }));
    // al2023.tar.br holds lib/ (NSS, NSPR, expat); fonts.tar.br holds fonts/ and a fonts.conf for Lambda's paths, replaced below.
    for (const tarball of ['al2023.tar.br', 'fonts.tar.br']) await untar(path.join(bin, tarball), tmp);
    fs.writeFileSync(
      path.join(tmp, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${dir}/fonts</dir>\n  <dir>/usr/share/fonts</dir>\n  <cachedir>${dir}/fonts-cache</cachedir>\n</fontconfig>\n`,
    );
    try {
      fs.renameSync(tmp, dir);
    } catch (error) {
      // Another process unpacked the same version first: use its copy.
      if (!fs.existsSync(path.join(dir, 'chromium'))) throw error;
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  } catch (error) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
  return dir;
}

/** Unpacks a .tar.br with Node's brotli and the system's tar (part of every Debian base). */
async function untar(file, into) {
  // Through a file, not a pipe: tar stops reading at the archive's end marker, before the padding.
  const tarFile = path.join(into, `${path.basename(file, '.br')}`);
  await pipeline(fs.createReadStream(file), zlib.createBrotliDecompress(), fs.createWriteStream(tarFile));
  try {
    const result = spawnSync('tar', ['-x', '-f', tarFile, '-C', into], { encoding: 'utf8' });
    if (result.error) throw result.error;
    if (result.status !== 0) throw new Error(`tar -x ${path.basename(file)} exited ${result.status}: ${result.stderr}`);
  } finally {
    fs.rmSync(tarFile, { force: true });
  }
}
