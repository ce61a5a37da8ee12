import * as z from 'zod';
import { ROLES, type Role } from './contract/access.js';
import { isLoopbackHost } from './tls/names.js';

const boolFlag = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1');

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

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
const publicUrl = optionalText.refine(
  (v) => v === undefined || isHttpsOrigin(v),
  'must be an https:// origin such as https://fleet.example.org (scheme and host, no path); plain-HTTP sign-in is for loopback development with FLEET_AUTH_ALLOW_HTTP=true and no public URL',
);

/** A whole number within bounds, or the default when unset. */
function wholeNumber(fallback: number, min: number, max: number) {
  const message = `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? String(fallback) : v.trim()))
    .pipe(z.string().regex(/^\d+$/, message))
    .transform(Number)
    .pipe(z.number().int().min(min, message).max(max, message));
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

/** Every environment variable homefleet reads, validated once at start-up. */
const EnvSchema = z.object({
  PORT: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? '3000' : v))
    .pipe(z.string().regex(/^\d+$/, 'must be a port number from 0 to 65535'))
    .transform(Number)
    .pipe(z.number().int().min(0, 'must be a port number from 0 to 65535').max(65535, 'must be a port number from 0 to 65535')),
  HOST: optionalText.transform((v) => v ?? '127.0.0.1'),
  DB_PATH: optionalText.transform((v) => v ?? './data/homefleet.db'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent', ''])
    .optional()
    .transform((v) => (v ? v : 'info')),
  TRUST_PROXY: optionalText,
  FLEET_SETUP_TOKEN: optionalText,
  FLEET_PUBLIC_URL: publicUrl,
  ORIGIN: publicUrl,
  FLEET_TELEMETRY_TOKEN: optionalText.refine(
    (v) => v === undefined || v.length >= 32,
    'must be at least 32 characters',
  ),
  FLEET_AUTH_ALLOW_HTTP: boolFlag,
  FLEET_AGENT_ALLOW_HTTP: boolFlag,
  FLEET_TLS: z
    .enum(['auto', 'on', 'off', ''], { error: 'must be auto, on or off' })
    .optional()
    .transform((v) => (v ? v : 'auto')),
  FLEET_TLS_CERT: optionalText,
  FLEET_TLS_KEY: optionalText,
  FLEET_TLS_NAMES: optionalText,
  FLEET_ALLOWED_HOSTS: optionalText.refine(
    (v) => v === undefined || v.split(/[\s,]+/).filter(Boolean).every((n) => /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$/.test(n)),
    'must be host names or addresses, separated by commas, without ports or schemes (e.g. fleet.lan,192.0.2.7)',
  ),
  FLEET_USAGE_RETENTION_DAYS: wholeNumber(180, 1, 36_500),
  FLEET_HEARTBEAT_INTERVAL_S: wholeNumber(30, 1, 3600),
  FLEET_USAGE_MAX_REPORTS: wholeNumber(100_000, 100, 10_000_000),
  FLEET_SNAPSHOT_INTERVAL_HOURS: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === '' ? '24' : v.trim().toLowerCase() === 'off' ? '0' : v.trim()))
    .pipe(z.string().regex(/^\d+(\.\d+)?$/, 'must be a number of hours (24 = daily), or 0 or off to switch scheduled snapshots off'))
    .transform(Number)
    .pipe(
      z
        .number()
        .max(24 * 365, 'must be at most 8760 hours (a year)')
        .refine((h) => h === 0 || h >= 0.25, 'must be at least 0.25 hours (15 minutes), or 0 or off'),
    ),
  FLEET_SNAPSHOT_KEEP: wholeNumber(7, 1, 1000),
  FLEET_OIDC_ISSUER: optionalText.refine(
    (v) => v === undefined || isIssuerUrl(v),
    "must be the provider's issuer URL, https://… (plain http:// only on a loopback address), without credentials, query or fragment",
  ),
  FLEET_OIDC_CLIENT_ID: optionalText.refine((v) => v === undefined || /^[\x21-\x7e]{1,256}$/.test(v), 'must be 1 to 256 printable ASCII characters without spaces'),
  FLEET_OIDC_CLIENT_SECRET: optionalText.refine((v) => v === undefined || /^[\x20-\x7e]{1,1024}$/.test(v), 'must be 1 to 1024 printable ASCII characters'),
  FLEET_OIDC_SCOPES: optionalText
    .transform((v) => v ?? 'openid profile email')
    .refine((v) => /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(v) && v.split(' ').includes('openid'), 'must be scope names separated by single spaces, including openid'),
  FLEET_OIDC_ROLE_CLAIM: optionalText
    .transform((v) => v ?? 'groups')
    .refine((v) => /^[A-Za-z0-9_.:/-]{1,200}$/.test(v), 'must be a claim name (letters, digits and _ . : / -); a dotted name such as realm_access.roles reads a nested claim'),
  FLEET_OIDC_ROLE_MAP: optionalText.refine((v) => v === undefined || parseRoleMap(v) !== undefined, ROLE_MAP_HELP),
  FLEET_OIDC_NAME: optionalText.refine((v) => v === undefined || (v.length <= 60 && !/[\x00-\x1f\x7f]/.test(v)), 'must be at most 60 characters'),
  FLEET_OIDC_ONLY: boolFlag,
  FLEET_REQUIRE_2FA: z
    .enum(['off', 'administrators', 'all', ''], { error: 'must be off, administrators or all' })
    .optional()
    .transform((v) => (v ? v : 'off')),
});

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
  oidc: OidcConfig | undefined;
  /** FLEET_REQUIRE_2FA: whose accounts need a second factor before any fleet access. */
  require2fa: 'off' | 'administrators' | 'all';
}

export class ConfigError extends Error {}

/** Reads the configuration; a bad value throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Parsed once: compiling zod's fast path for the object (new Function) cost more than it saves.
  const parsed = EnvSchema.safeParse(env, { jitless: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    const shown = /TOKEN|SECRET/.test(name) ? '' : ` (got ${JSON.stringify(env[name] ?? '')})`;
    throw new ConfigError(`Invalid ${name}${shown}: ${issue.message}`);
  }
  const e = parsed.data;
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
    oidc,
    require2fa: e.FLEET_REQUIRE_2FA,
  };
}

/** The FLEET_OIDC_* variables together: a partial set names the one missing (never the secret's value). */
function oidcConfig(e: z.infer<typeof EnvSchema>): OidcConfig | undefined {
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
