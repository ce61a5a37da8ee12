import type { Request } from 'express';
import { allowedOrigins, ANONYMOUS, from, hashPassword, loginSubject, userSubject, type AccountRow, type AccountService, type Sealer, type ThrottleKey } from '../access/api.js';
import type { AuditLog } from '../audit.js';
import { currentContext } from '../http/request-context.js';
import type { AppContext } from '../context.js';
import type { OidcConfig } from '../config.js';
import type { Role } from '../contract/access.js';
import { HttpError, notFound } from '../errors.js';
import { newToken, secretsEqual } from '../http/secrets.js';
import { isoSeconds } from '../time.js';
import type { SignInRepo } from './repo.js';
import { claimValues, mapRole, nextPath, uniqueUsername } from './roles.js';

type OpenIdClient = typeof import('openid-client');
type ClientConfiguration = InstanceType<OpenIdClient['Configuration']>;

/** A flow the provider does not send back within 10 minutes is dropped. */
export const FLOW_MS = 10 * 60 * 1000;
export const FLOW_COOKIE = 'oidc';

/** Why a single sign-on ended without a session: a fixed code the sign-in page words, never provider text. */
export type RefusalCode = 'state' | 'denied' | 'token' | 'role' | 'disabled' | 'last_admin' | 'provider' | 'origin' | 'throttled';
export class SignInRefused extends Error {
  constructor(readonly code: RefusalCode) {
    super(code);
  }
}

const REASONS: Record<RefusalCode, string> = {
  state: 'the sign-in did not start in this browser or has expired',
  denied: 'the provider did not sign the person in',
  token: 'the provider’s answer did not pass the ID token checks',
  role: 'no role is mapped for the provider’s claim values',
  disabled: 'the account is disabled',
  last_admin: 'the provider’s groups would demote the last enabled administrator',
  provider: 'the provider could not be reached',
  origin: 'the address the browser is on is not homefleet’s configured origin',
  throttled: 'too many failed attempts',
};

interface Flow {
  state: string;
  nonce: string;
  verifier: string;
  redirectUri: string;
  next: string;
}

// Loaded on first use only: a server without single sign-on never reads the OpenID Connect client.
let openid: Promise<OpenIdClient> | undefined;
const loadClient = () => (openid ??= import('openid-client'));

/**
 * Single sign-on with an OpenID provider: authorization code with PKCE (S256), a `state` bound to
 * the browser that started (the whole flow travels in a signed 10-minute cookie, so no anonymous
 * start can push another person's flow out of a store) and a `nonce`; the ID
 * token's signature is checked against the issuer's keys although it came from the token endpoint
 * (enableNonRepudiationChecks), and `iss`, `aud`, `exp` and `nonce` by the client.
 */
export function createOidc(ctx: Pick<AppContext, 'clock' | 'config' | 'transaction' | 'logger'>, accounts: AccountService, repo: SignInRepo, audit: AuditLog, sealer: Sealer) {
  const { clock, config, transaction, logger } = ctx;
  let discovered: Promise<ClientConfiguration> | undefined;

  async function discover(oidc: OidcConfig): Promise<ClientConfiguration> {
    const client = await loadClient();
    const issuer = new URL(oidc.issuer);
    const insecure = issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [];
    const found = await client.discovery(issuer, oidc.clientId, undefined, client.None(), { execute: insecure, timeout: 10 });
    const server = found.serverMetadata();
    // client_secret_basic is the standard's default; post where the provider lists only that.
    const methods = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    const auth = !oidc.clientSecret
      ? client.None()
      : methods.includes('client_secret_basic') || !methods.includes('client_secret_post')
        ? client.ClientSecretBasic(oidc.clientSecret)
        : client.ClientSecretPost(oidc.clientSecret);
    const configuration = new client.Configuration(server, oidc.clientId, undefined, auth);
    configuration.timeout = 10;
    for (const step of [...insecure, client.enableNonRepudiationChecks]) step(configuration);
    return configuration;
  }

  function clientConfiguration(oidc: OidcConfig): Promise<ClientConfiguration> {
    discovered ??= discover(oidc).catch((err: unknown) => {
      discovered = undefined;
      logger.warn({ issuer: oidc.issuer, err: { message: String((err as Error)?.message).slice(0, 200) } }, 'OpenID provider discovery failed');
      throw new SignInRefused('provider');
    });
    return discovered;
  }

  /** "The configured origin's /api/auth/oidc/callback, or in loopback development the origin the browser is on." */
  function callbackUrl(req: Request): string {
    if (config.publicOrigin) return `${config.publicOrigin}/api/auth/oidc/callback`;
    const here = `${req.protocol}://${req.get('host') ?? ''}`;
    if (!allowedOrigins(config, req.socket.localPort).includes(here)) throw new SignInRefused('origin');
    return `${here}/api/auth/oidc/callback`;
  }

  const configured = (): OidcConfig => {
    if (!config.oidc) throw notFound('single sign-on is not configured');
    return config.oidc;
  };

  function refuse(code: RefusalCode, who?: string): never {
    audit.write({ actor: ANONYMOUS, action: 'login.failure', subject: loginSubject(who), summary: `single sign-on failed${who ? ` for ${who}` : ''}${from(currentContext().ip)}: ${REASONS[code]}`, detail: { method: 'oidc', reason: code } });
    throw new SignInRefused(code);
  }

  /** The account linked to the provider's issuer and subject (made at the first sign-in), its role set from the claim. */
  function signInAccount(oidc: OidcConfig, claims: Record<string, unknown>, role: Role, passwordHash: string | undefined): { row: AccountRow } | { refused: RefusalCode; who?: string } {
    const issuer = String(claims.iss);
    const subject = String(claims.sub);
    const linked = repo.accountOfIdentity(issuer, subject);
    if (linked === undefined) {
      if (!passwordHash) return { refused: 'provider' };
      const username = uniqueUsername(claims, (name) => accounts.repo.byUsername(name) !== undefined);
      const named = typeof claims.name === 'string' ? claims.name.trim().slice(0, 100) : '';
      const id = accounts.repo.insert({ username, display_name: named || username, role, must_change_password: false, password_hash: passwordHash, created_at: isoSeconds(clock.now()) });
      repo.link(id, issuer, subject, isoSeconds(clock.now()));
      const row = accounts.repo.byId(id)!;
      audit.write({ action: 'user.create', subject: userSubject(row), summary: `${username} was created at their first sign-in with ${oidc.name} (${role})`, detail: { id, role, via: 'oidc' } });
      return { row };
    }
    const row = accounts.repo.byId(linked)!;
    if (!row.enabled) return { refused: 'disabled', who: row.username };
    if (row.role === role) return { row };
    if (row.role === 'administrator' && accounts.repo.enabledAdmins() <= 1) return { refused: 'last_admin', who: row.username };
    accounts.repo.update(row.id, { display_name: row.display_name, role, enabled: true });
    // The old role's sessions end (the new one is issued after), as with an administrator's role change.
    accounts.sessions.revokeAll(row.id, 'role changed');
    audit.write({
      action: 'user.update', subject: userSubject(row),
      summary: `${row.username}’s role was set by ${oidc.name}: ${row.role} → ${role}`,
      changes: [{ field: 'role', before: row.role, after: role }], detail: { id: row.id, changes: { role: { from: row.role, to: role } }, via: 'oidc' },
    });
    return { row: accounts.repo.byId(row.id)! };
  }

  return {
    /** The provider's authorization URL, and the sealed flow for the browser's flow cookie. */
    async start(req: Request, next: string): Promise<{ url: string; cookie: string }> {
      const oidc = configured();
      const redirectUri = callbackUrl(req);
      const configuration = await clientConfiguration(oidc);
      const client = await loadClient();
      const flow: Flow = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), redirectUri, next };
      const url = client.buildAuthorizationUrl(configuration, {
        redirect_uri: redirectUri,
        scope: oidc.scopes,
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
      });
      return { url: url.href, cookie: sealer.seal(FLOW_COOKIE, flow, FLOW_MS) };
    },

    /** The provider's redirect back: a session like a password login's, and where to go next. */
    async finish(cookie: string | undefined, query: URLSearchParams): Promise<{ token: string; next: string }> {
      const oidc = configured();
      const slot: ThrottleKey = ['login.ip', currentContext().ip ?? ''];
      try {
        accounts.takeSlot(slot);
      } catch (err) {
        if (err instanceof HttpError && err.status === 429) throw new SignInRefused('throttled');
        throw err;
      }
      const flow = sealer.open<Flow>(FLOW_COOKIE, cookie);
      // The state must be the one this browser's cookie started: a link someone else started is refused.
      if (!flow || !secretsEqual(query.get('state') ?? '', flow.state)) refuse('state');
      if (query.has('error')) refuse('denied');
      const configuration = await clientConfiguration(oidc);
      const client = await loadClient();
      let claims: Record<string, unknown>;
      try {
        const callback = new URL(flow.redirectUri);
        callback.search = query.toString();
        const tokens = await client.authorizationCodeGrant(configuration, callback, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true });
        claims = { ...tokens.claims()! };
        // Providers that keep profile claims out of the ID token (conforming ones do, by default) answer them at userinfo.
        if (claimValues(claims, oidc.roleClaim).length === 0 || claims.preferred_username === undefined) {
          // The ID token's own claims (iss, sub, aud) win over anything userinfo says.
          const info = await client.fetchUserInfo(configuration, tokens.access_token, String(claims.sub)).catch(() => ({}));
          claims = { ...info, ...claims };
        }
      } catch (err) {
        logger.warn({ err: { name: (err as Error)?.name, code: (err as { code?: unknown })?.code, message: String((err as Error)?.message).slice(0, 200) } }, 'single sign-on refused');
        refuse('token');
      }
      const role = mapRole(claimValues(claims, oidc.roleClaim), oidc.roleMap);
      if (!role) refuse('role', typeof claims.preferred_username === 'string' ? claims.preferred_username.slice(0, 64) : undefined);
      const passwordHash = repo.accountOfIdentity(String(claims.iss), String(claims.sub)) === undefined ? await hashPassword(newToken()) : undefined;
      const outcome = transaction(() => {
        const result = signInAccount(oidc, claims, role, passwordHash);
        if ('refused' in result) return result;
        accounts.throttle.release([slot]);
        return { token: accounts.openSession(result.row, 'oidc') };
      })();
      if ('refused' in outcome) refuse(outcome.refused, outcome.who);
      return { token: outcome.token, next: nextPath(flow.next) };
    },
  };
}

export type Oidc = ReturnType<typeof createOidc>;
