import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** What the test changes in the ID token the token endpoint answers, re-signed so only that one check can fail. */
export type Tamper = 'signature' | 'audience' | 'nonce' | 'expiry';

export interface TestProvider {
  issuer: string;
  /** The people the provider knows: `login` on its sign-in form is the subject. */
  people: Map<string, Record<string, unknown>>;
  /** Set before a flow: the next ID token from the token endpoint is changed this way. */
  tamper: Tamper | undefined;
  /** Lets homefleet's client in once homefleet's callback address is known. */
  register(client: { client_id: string; client_secret: string; redirect_uris: string[] }): void;
  stop(): Promise<void>;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function signJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(key).toString('base64url')}`;
}

/**
 * A real OpenID provider (oidc-provider, the certified implementation) on 127.0.0.1 with its
 * development sign-in form (any password), consent granted for the one client, and a `groups`
 * claim in the profile scope and in a `groups` scope; like Authentik and Pocket ID by default, the
 * ID token carries only the standard claims and the rest comes from userinfo.
 */
export async function startProvider(): Promise<TestProvider> {
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const impostor = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...signing.privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const state: TestProvider = {
    issuer,
    people: new Map(),
    tamper: undefined,
    register(client) {
      const provider = new Provider(issuer, {
        clients: [{ ...client, grant_types: ['authorization_code'], response_types: ['code'] }],
        jwks: { keys: [jwk as never] },
        // groups in the profile scope (Authentik's default) and in a scope of its own (Pocket ID's `groups`).
        claims: { openid: ['sub'], profile: ['preferred_username', 'name', 'groups'], email: ['email'], groups: ['groups'] },
        cookies: { keys: ['test-provider-cookie-key'] },
        pkce: { required: () => true },
        features: { devInteractions: { enabled: true } },
        async findAccount(_ctx, sub) {
          const person = state.people.get(sub);
          return person ? { accountId: sub, claims: () => ({ sub, ...person }) } : undefined;
        },
        // First-party client: no consent screen.
        async loadExistingGrant(ctx) {
          const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
          grant.addOIDCScope('openid profile email groups');
          await grant.save();
          return grant;
        },
      });
      const callback = provider.callback();
      handler = (req, res) => {
        const tamper = state.tamper;
        if (req.method === 'POST' && req.url === '/token' && tamper) {
          state.tamper = undefined;
          const end = res.end.bind(res) as (chunk?: unknown) => http.ServerResponse;
          res.end = ((chunk?: unknown) => {
            const body = JSON.parse(String(chunk)) as { id_token?: string };
            if (body.id_token) body.id_token = tamperWith(body.id_token, tamper);
            const text = JSON.stringify(body);
            res.setHeader('content-length', Buffer.byteLength(text));
            return end(text);
          }) as typeof res.end;
        }
        callback(req, res);
      };
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };

  function tamperWith(idToken: string, tamper: Tamper): string {
    const [head, payload] = idToken.split('.');
    const header = JSON.parse(Buffer.from(head!, 'base64url').toString()) as Record<string, unknown>;
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
    const now = Math.floor(Date.now() / 1000);
    if (tamper === 'signature') return signJwt(header, claims, impostor.privateKey);
    if (tamper === 'audience') claims.aud = 'another-client';
    if (tamper === 'nonce') claims.nonce = 'a-nonce-from-another-flow';
    if (tamper === 'expiry') Object.assign(claims, { iat: now - 7200, exp: now - 3600 });
    return signJwt(header, claims, signing.privateKey);
  }

  return state;
}
