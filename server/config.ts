import { z } from 'zod';

const boolFlag = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1');

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/**
 * The external origin is HTTPS: the session cookie there is `__Host-` and Secure. An http:// value
 * used to start a server nobody could sign in to (plain-HTTP login is for loopback development only).
 */
const publicUrl = optionalText.refine(
  (v) => v === undefined || /^https:\/\/[^/?#@\s]+$/i.test(v.replace(/\/$/, '')),
  'must be an https:// origin such as https://fleet.example.org (scheme and host, no path); plain-HTTP sign-in is for loopback development with FLEET_AUTH_ALLOW_HTTP=true and no public URL',
);

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
});

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
}

export class ConfigError extends Error {}

/** Reads the configuration; a bad value throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    const shown = name.includes('TOKEN') ? '' : ` (got ${JSON.stringify(env[name] ?? '')})`;
    throw new ConfigError(`Invalid ${name}${shown}: ${issue.message}`);
  }
  const e = parsed.data;
  const origin = e.FLEET_PUBLIC_URL ?? e.ORIGIN;
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
  };
}

/** The configuration tests and the desktop app start from: in memory, nothing from the environment. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), dbPath: ':memory:', logLevel: 'silent', ...overrides };
}
