import { ROLES, type Role } from './contract/access.js';
import { isLoopbackHost } from './tls/names.js';

/** A variable's value is refused; the message says what it must be (loadConfig names the variable). */
class Refused extends Error {}

function refuse(message: string): never {
  throw new Refused(message);
}

/** Trimmed, or undefined when unset or blank. */
const optionalText = (raw: string | undefined) => (raw === undefined || raw.trim() === '' ? undefined : raw.trim());

/** optionalText, refused with `message` when set and `valid` says no. */
const checkedText = (valid: (value: string) => boolean, message: string) => (raw: string | undefined) => {
  const value = optionalText(raw);
  return value === undefined || valid(value) ? value : refuse(message);
};

/** One of `values` exactly; unset or empty gives `fallback`. The default message is the one zod gave these variables. */
function choice<const T extends readonly string[]>(values: T, fallback: T[number], message = `Invalid option: expected one of ${[...values, ''].map((v) => JSON.stringify(v)).join('|')}`) {
  return (raw: string | undefined): T[number] => {
    if (raw === undefined || raw === '') return fallback;
    return (values as readonly string[]).includes(raw) ? (raw as T[number]) : refuse(message);
  };
}

// Listed as zod listed them, so a refusal reads as it did.
const flagValue = choice(['0', '1', 'true', 'false'], '0');
const flag = (raw: string | undefined) => {
  const value = flagValue(raw);
  return value === 'true' || value === '1';
};

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** `https://`, a DNS name, an IPv4 address or a bracketed IPv6 address, an optional port, an optional `/`: nothing else. */
const HTTPS_ORIGIN = new RegExp(`^https://(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::(\\d{1,5}))?/?$`);

/**
 * Whether `value` is a plain https origin. The value is written into install commands and the
 * installer a root shell runs, so quotes, `;`, `$`, credentials, paths and queries are refused here,
 * not only quoted later. The URL parser settles what the pattern cannot (IPv4 ranges, IPv6 syntax).
 */
export function isHttpsOrigin(value: string): boolean {
  const match = HTTPS_ORIGIN.exec(value);
  if (!match || value.length > 300) return false;
  if (match[1] !== undefined && (Number(match[1]) < 1 || Number(match[1]) > 65535)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The external origin is HTTPS: the session cookie there is `__Host-` and Secure. An http:// value
 * used to start a server nobody could sign in to (plain-HTTP login is for loopback development only).
 */
const publicUrl = checkedText(
  isHttpsOrigin,
  'must be an https:// origin such as https://fleet.example.org (scheme and host, no path); plain-HTTP sign-in is for loopback development with FLEET_AUTH_ALLOW_HTTP=true and no public URL',
);

/** A whole number within bounds, or the default when unset. */
function wholeNumber(fallback: number, min: number, max: number) {
  const message = `must be a whole number from ${min} to ${max}`;
  return (raw: string | undefined) => {
    const value = optionalText(raw);
    if (value === undefined) return fallback;
    const number = Number(value);
    return /^\d+$/.test(value) && number >= min && number <= max ? number : refuse(message);
  };
}

const BINARY_UNITS = { '': 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 } as const;

/** A size in bytes, or a whole number of KiB, MiB, GiB or TiB (`16GiB`); at least 1 byte. */
function byteSize(fallback: number) {
  return (raw: string | undefined) => {
    const value = optionalText(raw);
    if (value === undefined) return fallback;
    const match = /^(\d{1,16})\s*(KiB|MiB|GiB|TiB)?$/.exec(value);
    const bytes = match ? Number(match[1]) * BINARY_UNITS[(match[2] ?? '') as keyof typeof BINARY_UNITS] : 0;
    return bytes >= 1 && bytes <= Number.MAX_SAFE_INTEGER ? bytes : refuse('must be a number of bytes, or of KiB, MiB, GiB or TiB such as 16GiB (at least 1 byte)');
  };
}

/** Hours between scheduled snapshots: 0 or off for none, else at least a quarter of an hour and at most a year. */
function snapshotHours(raw: string | undefined): number {
  const value = optionalText(raw);
  if (value === undefined) return 24;
  if (value.toLowerCase() === 'off') return 0;
  if (!/^\d+(\.\d+)?$/.test(value)) refuse('must be a number of hours (24 = daily), or 0 or off to switch scheduled snapshots off');
  const hours = Number(value);
  if (hours > 24 * 365) refuse('must be at most 8760 hours (a year)');
  return hours === 0 || hours >= 0.25 ? hours : refuse('must be at least 0.25 hours (15 minutes), or 0 or off');
}

/** An OpenID provider's issuer: https, or plain http on a loopback address (a provider on the same machine, tests). */
function isIssuerUrl(value: string): boolean {
  try {
    const url = new URL(value);
    if (url.username || url.password || url.search || url.hash || value.length > 500) return false;
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  } catch {
    return false;
  }
}

/** FLEET_OIDC_ROLE_MAP: `claim value=role` pairs; `*` is the role of a sign-in none of whose values matched. */
export interface RoleMap {
  values: ReadonlyMap<string, Role>;
  fallback: Role | undefined;
}

const ROLE_MAP_HELP = 'must be claim-value=role pairs separated by commas, e.g. admins=administrator,ops=operator,*=viewer (roles: viewer, operator, administrator)';

/** Parses FLEET_OIDC_ROLE_MAP; undefined when it is not well formed. */
export function parseRoleMap(text: string): RoleMap | undefined {
  const values = new Map<string, Role>();
  let fallback: Role | undefined;
  for (const pair of text.split(',')) {
    const eq = pair.lastIndexOf('=');
    const value = pair.slice(0, eq).trim();
    const role = pair.slice(eq + 1).trim() as Role;
    if (eq < 0 || !value || !ROLES.includes(role)) return undefined;
    if (value === '*') {
      if (fallback) return undefined;
      fallback = role;
    } else {
      if (values.has(value)) return undefined;
      values.set(value, role);
    }
  }
  return { values, fallback };
}

const PORT_MESSAGE = 'must be a port number from 0 to 65535';

/**
 * Every environment variable homefleet reads, validated once at start-up, in the order they are
 * checked (the first refused one is reported). Plain functions: the zod schema this was cost the
 * server 4 to 5 ms of every start to build and run once.
 */
const VARIABLES = {
  PORT: (raw: string | undefined) => {
    const value = raw === undefined || raw === '' ? '3000' : raw;
    return /^\d+$/.test(value) && Number(value) <= 65535 ? Number(value) : refuse(PORT_MESSAGE);
  },
  HOST: (raw: string | undefined) => optionalText(raw) ?? '127.0.0.1',
  DB_PATH: (raw: string | undefined) => optionalText(raw) ?? './data/homefleet.db',
  LOG_LEVEL: choice(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  TRUST_PROXY: optionalText,
  FLEET_SETUP_TOKEN: optionalText,
  FLEET_PUBLIC_URL: publicUrl,
  ORIGIN: publicUrl,
  FLEET_TELEMETRY_TOKEN: checkedText((v) => v.length >= 32, 'must be at least 32 characters'),
  FLEET_AUTH_ALLOW_HTTP: flag,
  FLEET_AGENT_ALLOW_HTTP: flag,
  FLEET_TLS: choice(['auto', 'on', 'off'], 'auto', 'must be auto, on or off'),
  FLEET_TLS_CERT: optionalText,
  FLEET_TLS_KEY: optionalText,
  FLEET_TLS_NAMES: optionalText,
  FLEET_ALLOWED_HOSTS: checkedText(
    (v) => v.split(/[\s,]+/).filter(Boolean).every((n) => /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$/.test(n)),
    'must be host names or addresses, separated by commas, without ports or schemes (e.g. fleet.lan,192.0.2.7)',
  ),
  FLEET_USAGE_RETENTION_DAYS: wholeNumber(180, 1, 36_500),
  FLEET_HEARTBEAT_INTERVAL_S: wholeNumber(30, 1, 3600),
  FLEET_USAGE_MAX_REPORTS: wholeNumber(100_000, 100, 10_000_000),
  FLEET_SNAPSHOT_INTERVAL_HOURS: snapshotHours,
  FLEET_SNAPSHOT_KEEP: wholeNumber(7, 1, 1000),
  FLEET_UPLOAD_MAX_BYTES: byteSize(16 * BINARY_UNITS.GiB),
  FLEET_FILE_CACHE_MAX_BYTES: byteSize(50 * BINARY_UNITS.GiB),
  FLEET_OIDC_ISSUER: checkedText(
    isIssuerUrl,
    "must be the provider's issuer URL, https://… (plain http:// only on a loopback address), without credentials, query or fragment",
  ),
  FLEET_OIDC_CLIENT_ID: checkedText((v) => /^[\x21-\x7e]{1,256}$/.test(v), 'must be 1 to 256 printable ASCII characters without spaces'),
  FLEET_OIDC_CLIENT_SECRET: checkedText((v) => /^[\x20-\x7e]{1,1024}$/.test(v), 'must be 1 to 1024 printable ASCII characters'),
  FLEET_OIDC_SCOPES: (raw: string | undefined) => {
    const value = optionalText(raw) ?? 'openid profile email';
    return /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(value) && value.split(' ').includes('openid')
      ? value
      : refuse('must be scope names separated by single spaces, including openid');
  },
  FLEET_OIDC_ROLE_CLAIM: (raw: string | undefined) => {
    const value = optionalText(raw) ?? 'groups';
    return /^[A-Za-z0-9_.:/-]{1,200}$/.test(value)
      ? value
      : refuse('must be a claim name (letters, digits and _ . : / -); a dotted name such as realm_access.roles reads a nested claim');
  },
  FLEET_OIDC_ROLE_MAP: checkedText((v) => parseRoleMap(v) !== undefined, ROLE_MAP_HELP),
  FLEET_OIDC_NAME: checkedText((v) => v.length <= 60 && !/[\x00-\x1f\x7f]/.test(v), 'must be at most 60 characters'),
  FLEET_OIDC_ONLY: flag,
  FLEET_REQUIRE_2FA: choice(['off', 'administrators', 'all'], 'off', 'must be off, administrators or all'),
};

type Env = { [Name in keyof typeof VARIABLES]: ReturnType<(typeof VARIABLES)[Name]> };

/** Each variable read in turn; the first refused one throws a ConfigError whose one line names it. */
function readEnv(env: NodeJS.ProcessEnv): Env {
  const read: Record<string, unknown> = {};
  for (const [name, parse] of Object.entries(VARIABLES) as [keyof Env, (raw: string | undefined) => unknown][]) {
    try {
      read[name] = parse(env[name]);
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      const shown = /TOKEN|SECRET/.test(name) ? '' : ` (got ${JSON.stringify(env[name] ?? '')})`;
      throw new ConfigError(`Invalid ${name}${shown}: ${err.message}`);
    }
  }
  return read as Env;
}

/** Single sign-on through an OpenID provider (server/signin/oidc.ts); absent when FLEET_OIDC_ISSUER is not set. */
export interface OidcConfig {
  issuer: string;
  clientId: string;
  /** Never logged, audited, shown or put in an error text. */
  clientSecret: string | undefined;
  scopes: string;
  roleClaim: string;
  roleMap: RoleMap;
  /** The button's label: "Sign in with <name>". */
  name: string;
  /** FLEET_OIDC_ONLY: password sign-in is off (setup and the recovery command still work). */
  only: boolean;
}

export interface Config {
  port: number;
  host: string;
  dbPath: string;
  logLevel: string;
  /** The one proxy hop whose X-Forwarded-* headers are believed (Express `trust proxy` value), or undefined. */
  trustProxy: string | undefined;
  setupToken: string | undefined;
  /** Configured external origin (FLEET_PUBLIC_URL, else ORIGIN), without a trailing slash. */
  publicOrigin: string | undefined;
  telemetryToken: string | undefined;
  authAllowHttp: boolean;
  agentAllowHttp: boolean;
  /** Built-in HTTPS (server/tls): `auto` serves HTTPS on a non-loopback bind without a proxy, `on` always, `off` never. */
  tls: 'auto' | 'on' | 'off';
  /** The user's certificate and key (PEM files), both or neither. */
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** Extra names (DNS names or addresses) the self-signed certificate covers, besides the machine's own. */
  tlsExtraNames: string[];
  /** More names the server answers to (FLEET_ALLOWED_HOSTS): any other Host gets 421 (server/http/host-check.ts). */
  allowedHosts: string[];
  /** Set by createApp when the server speaks HTTPS itself: the names its certificate covers (for the allowed Origins). */
  tlsNames?: string[];
  /** Usage reports older than this many days are deleted daily. */
  usageRetentionDays: number;
  /** Seconds between agent heartbeats, sent to agents (FLEET_HEARTBEAT_INTERVAL_S); offline after 3 intervals. */
  heartbeatIntervalS: number;
  /** At most this many usage reports are kept (the newest). */
  usageMaxReports: number;
  /**
   * Pin of the controller's self-signed certificate for agent install commands: base64 SHA-256 of its
   * SubjectPublicKeyInfo (curl's --pinnedpubkey format without `sha256//`). Set by the TLS setup.
   */
  tlsFingerprint?: string;
  /** Hours between scheduled database snapshots; 0 = no scheduled snapshots. */
  snapshotIntervalHours: number;
  /** Scheduled (and, separately, manual) snapshots kept; pre-import snapshots keep the last 3. */
  snapshotKeep: number;
  /** FLEET_UPLOAD_MAX_BYTES: the largest file POST /api/files takes (server/files). */
  uploadMaxBytes: number;
  /** FLEET_FILE_CACHE_MAX_BYTES: what the cached files may take together; the least recently used go first. */
  fileCacheMaxBytes: number;
  oidc: OidcConfig | undefined;
  /** FLEET_REQUIRE_2FA: whose accounts need a second factor before any fleet access. */
  require2fa: 'off' | 'administrators' | 'all';
}

export class ConfigError extends Error {}

/** Reads the configuration; a bad value throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = readEnv(env);
  if (Boolean(e.FLEET_TLS_CERT) !== Boolean(e.FLEET_TLS_KEY)) {
    throw new ConfigError(`Invalid ${e.FLEET_TLS_CERT ? 'FLEET_TLS_KEY' : 'FLEET_TLS_CERT'}: FLEET_TLS_CERT and FLEET_TLS_KEY must be set together`);
  }
  const origin = e.FLEET_PUBLIC_URL ?? e.ORIGIN;
  const oidc = oidcConfig(e);
  return {
    port: e.PORT,
    host: e.HOST,
    dbPath: e.DB_PATH,
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
    setupToken: e.FLEET_SETUP_TOKEN,
    publicOrigin: origin?.replace(/\/$/, ''),
    telemetryToken: e.FLEET_TELEMETRY_TOKEN,
    authAllowHttp: e.FLEET_AUTH_ALLOW_HTTP,
    agentAllowHttp: e.FLEET_AGENT_ALLOW_HTTP,
    tls: e.FLEET_TLS,
    tlsCertFile: e.FLEET_TLS_CERT,
    tlsKeyFile: e.FLEET_TLS_KEY,
    tlsExtraNames: (e.FLEET_TLS_NAMES ?? '').split(/[\s,]+/).filter(Boolean),
    allowedHosts: (e.FLEET_ALLOWED_HOSTS ?? '').split(/[\s,]+/).filter(Boolean),
    usageRetentionDays: e.FLEET_USAGE_RETENTION_DAYS,
    heartbeatIntervalS: e.FLEET_HEARTBEAT_INTERVAL_S,
    usageMaxReports: e.FLEET_USAGE_MAX_REPORTS,
    snapshotIntervalHours: e.FLEET_SNAPSHOT_INTERVAL_HOURS,
    snapshotKeep: e.FLEET_SNAPSHOT_KEEP,
    uploadMaxBytes: e.FLEET_UPLOAD_MAX_BYTES,
    fileCacheMaxBytes: e.FLEET_FILE_CACHE_MAX_BYTES,
    oidc,
    require2fa: e.FLEET_REQUIRE_2FA,
  };
}

/** The FLEET_OIDC_* variables together: a partial set names the one missing (never the secret's value). */
function oidcConfig(e: Env): OidcConfig | undefined {
  const others = [
    ...(['FLEET_OIDC_CLIENT_ID', 'FLEET_OIDC_CLIENT_SECRET', 'FLEET_OIDC_ROLE_MAP', 'FLEET_OIDC_NAME'] as const).filter((name) => e[name] !== undefined),
    ...(e.FLEET_OIDC_ONLY ? ['FLEET_OIDC_ONLY'] : []),
  ];
  if (!e.FLEET_OIDC_ISSUER) {
    if (others.length) throw new ConfigError(`Invalid FLEET_OIDC_ISSUER: must be set when ${others[0]} is (the provider's issuer URL)`);
    return undefined;
  }
  if (!e.FLEET_OIDC_CLIENT_ID) throw new ConfigError('Invalid FLEET_OIDC_CLIENT_ID: must be set with FLEET_OIDC_ISSUER (the client ID the provider gave homefleet)');
  if (!e.FLEET_OIDC_ROLE_MAP) throw new ConfigError(`Invalid FLEET_OIDC_ROLE_MAP: must be set with FLEET_OIDC_ISSUER; it ${ROLE_MAP_HELP}`);
  return {
    issuer: e.FLEET_OIDC_ISSUER,
    clientId: e.FLEET_OIDC_CLIENT_ID,
    clientSecret: e.FLEET_OIDC_CLIENT_SECRET,
    scopes: e.FLEET_OIDC_SCOPES,
    roleClaim: e.FLEET_OIDC_ROLE_CLAIM,
    roleMap: parseRoleMap(e.FLEET_OIDC_ROLE_MAP)!,
    name: e.FLEET_OIDC_NAME ?? 'single sign-on',
    only: e.FLEET_OIDC_ONLY,
  };
}

/** The configuration tests and the desktop app start from: in memory, nothing from the environment. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), dbPath: ':memory:', logLevel: 'silent', ...overrides };
}
