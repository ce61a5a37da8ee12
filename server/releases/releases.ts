import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Manifest, ManifestAgent } from '../contract/hosts.js';
import { channelOf, compareVersions, VERSION_PATTERN, VERSION_SOURCE as VERSION, type AgentChannel } from '../contract/versions.js';
import type { Clock } from '../time.js';
import { assembleScript, includedFiles } from './assemble.js';
import { shellQuote } from './shell-quote.js';

export const AGENT_FILE = 'host-agent.sh';
export const INSTALLER_FILE = 'install-agent.sh';
export const KEY_FILE = 'agent-signing-key.pem';
const DAY_MS = 24 * 60 * 60 * 1000;
/** How long an issued manifest is valid; it is re-issued (same content, new dates) every UTC day. */
export const MANIFEST_LIFETIME_MS = 7 * DAY_MS;
export const MANIFEST_FORMAT = 1;

const VERSION_LINE = new RegExp(`^\\s*(?:readonly\\s+|declare\\s+-r\\s+)?HOMEFLEET_AGENT_VERSION=["']?${VERSION}["']?\\s*$`, 'm');
const VERSION_COMMENT = new RegExp(`^#\\s*homefleet-agent-version:\\s*${VERSION}\\s*$`, 'm');
const setting = (name: string) => new RegExp(`^\\s*(?:readonly\\s+)?${name}=["']?${VERSION}["']?\\s*$`, 'm');
const MIN_CONTROLLER = setting('HOMEFLEET_MIN_CONTROLLER_VERSION');
const UPGRADABLE_FROM = setting('HOMEFLEET_AGENT_UPGRADABLE_FROM');

/** The version an agent script declares (`HOMEFLEET_AGENT_VERSION="x.y.z"` near its top), or undefined. */
export function agentVersionOf(script: string): string | undefined {
  return (VERSION_LINE.exec(script) ?? VERSION_COMMENT.exec(script))?.[1];
}

export interface ReleaseDirs {
  /** Where the current agent and the installer sources are (reporter/). */
  agentDir: string;
  /** Older agent versions kept for hosts not yet upgraded: `<keptDir>/<version>/host-agent.sh`. */
  keptDir: string;
}

/**
 * The controller's Ed25519 signing key: made on first start and kept beside the database file
 * (mode 0600), never inside the database, so exports and snapshots of the database never carry it.
 * An in-memory database gets an in-memory key.
 */
export function loadSigningKey(dbPath: string): KeyObject {
  if (dbPath === ':memory:') return generateKeyPairSync('ed25519').privateKey;
  const file = path.join(path.dirname(path.resolve(dbPath)), KEY_FILE);
  try {
    return createPrivateKey(fs.readFileSync(file));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read the agent signing key ${file}: ${(err as Error).message}`);
  }
  const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
  try {
    // 'wx': two processes starting at once must not overwrite each other's key.
    fs.writeFileSync(file, pem, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return createPrivateKey(fs.readFileSync(file));
}

interface AgentRelease extends ManifestAgent {
  file: string;
  /** What is served: the file with its helpers inlined (server/releases/assemble.ts); the hash and size are of these bytes. */
  bytes: Buffer;
}

/**
 * The agent versions this controller ships and the signed manifest describing them. The current
 * agent is `<agentDir>/host-agent.sh`, served with the helpers it includes from `<agentDir>/lib/`
 * inlined; kept versions are `<keptDir>/<version>/host-agent.sh`, kept as they were served (a kept
 * copy that still includes a helper cannot run alone and is not offered).
 * Files are re-read when they change (size and mtime), so a deployment that replaces them is served at once.
 */
export function createReleases(dirs: ReleaseDirs, dbPath: string, clock: Clock) {
  const privateKey = loadSigningKey(dbPath);
  // Derived when an agent first enrolls, not at every start (a millisecond of it).
  let publicKeyPem: string | undefined;
  let cache: { key: string; releases: AgentRelease[] } | undefined;
  let signed: { key: string; bytes: Buffer; signature: string } | undefined;

  const currentFile = path.join(dirs.agentDir, AGENT_FILE);

  const libFiles = () => {
    try {
      return fs.readdirSync(path.join(dirs.agentDir, 'lib')).map((f) => path.join(dirs.agentDir, 'lib', f));
    } catch {
      return [];
    }
  };
  const assemble = (text: string) => assembleScript(text, (file) => fs.readFileSync(path.join(dirs.agentDir, file), 'utf8'));

  function candidates(): string[] {
    const files = [currentFile];
    let kept: string[] = [];
    try {
      kept = fs.readdirSync(dirs.keptDir).filter((d) => VERSION_PATTERN.test(d));
    } catch {
      // no kept versions
    }
    for (const dir of kept) files.push(path.join(dirs.keptDir, dir, AGENT_FILE));
    return files;
  }

  function stamp(files: string[]): string {
    return files
      .map((f) => {
        try {
          const st = fs.statSync(f);
          return `${f}:${st.size}:${st.mtimeMs}`;
        } catch {
          return `${f}:-`;
        }
      })
      .join('|');
  }

  function releases(): AgentRelease[] {
    const files = candidates();
    const key = stamp([...files, ...libFiles()]);
    if (cache?.key === key) return cache.releases;
    const found = new Map<string, AgentRelease>();
    files.forEach((file, index) => {
      let bytes: Buffer;
      try {
        bytes = fs.readFileSync(file);
        if (index === 0) bytes = Buffer.from(assemble(bytes.toString('utf8')), 'utf8');
      } catch {
        return;
      }
      const text = bytes.toString('utf8');
      if (includedFiles(text).length > 0) return;
      const version = agentVersionOf(text);
      if (!version) return;
      // A kept copy must be the version its folder names; the current file wins over a kept copy.
      if (index > 0 && path.basename(path.dirname(file)) !== version) return;
      if (found.has(version)) return;
      found.set(version, {
        version,
        url: `/api/agent/releases/${version}/${AGENT_FILE}`,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        size: bytes.length,
        min_controller_version: MIN_CONTROLLER.exec(text)?.[1] ?? '0.1.0',
        upgradable_from: UPGRADABLE_FROM.exec(text)?.[1] ?? '0.0.0',
        channel: channelOf(version),
        file,
        bytes,
      });
    });
    const list = [...found.values()].sort((a, b) => (a.file === currentFile ? -1 : b.file === currentFile ? 1 : compareVersions(b.version, a.version)));
    cache = { key, releases: list };
    return list;
  }

  return {
    /** The manifest signing key's public half (PEM), given to each enrolling agent. */
    get publicKeyPem(): string {
      publicKeyPem ??= createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
      return publicKeyPem;
    },
    /** The version in reporter/host-agent.sh, or undefined when the file is missing or declares none. */
    currentVersion(): string | undefined {
      const first = releases()[0];
      return first && first.file === currentFile ? first.version : undefined;
    },
    versions: () => releases().map((r) => r.version),
    /**
     * The newest shipped version a host on `channel` is given: of the stable ones for `stable`; of
     * all for `beta`, which gets a release once it is newer than the pre-releases before it.
     */
    newest(channel: AgentChannel): string | undefined {
      let best: string | undefined;
      for (const { version } of releases()) {
        if (channel === 'stable' && channelOf(version) !== 'stable') continue;
        if (best === undefined || compareVersions(version, best) > 0) best = version;
      }
      return best;
    },
    /** The bytes of one shipped agent version as served (the manifest's hash is of these), or undefined. */
    agentFile(version: string): Buffer | undefined {
      return releases().find((r) => r.version === version)?.bytes;
    },
    /**
     * The manifest bytes and their signature. The bytes depend only on the shipped files and the
     * UTC day, so manifest.json and manifest.json.sig fetched one after the other always match
     * (Ed25519 signatures are deterministic).
     */
    manifest(): { bytes: Buffer; signature: string } {
      const list = releases();
      const issued = Math.floor(clock.now() / DAY_MS) * DAY_MS;
      const key = `${cache?.key}#${issued}`;
      if (signed?.key === key) return signed;
      const manifest: Manifest = {
        manifest_version: MANIFEST_FORMAT,
        agents: list.map(({ file: _file, bytes: _bytes, ...agent }) => agent),
        issued_at: new Date(issued).toISOString(),
        expires_at: new Date(issued + MANIFEST_LIFETIME_MS).toISOString(),
      };
      const bytes = Buffer.from(JSON.stringify(manifest, null, 2) + '\n', 'utf8');
      signed = { key, bytes, signature: sign(null, bytes, privateKey).toString('base64') };
      return signed;
    },
    /** The installer with its helpers inlined and the address it is served from as its default `--server`. */
    installer(baseUrl: string | undefined): string | undefined {
      let text: string;
      try {
        text = assemble(fs.readFileSync(path.join(dirs.agentDir, INSTALLER_FILE), 'utf8'));
      } catch {
        return undefined;
      }
      if (!baseUrl) return text;
      return text.replace(/^HOMEFLEET_SERVER_DEFAULT=.*$/m, () => `HOMEFLEET_SERVER_DEFAULT=${shellQuote(baseUrl)}`);
    },
  };
}

export type Releases = ReturnType<typeof createReleases>;
