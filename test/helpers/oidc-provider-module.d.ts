// oidc-provider ships no types; the little of it the test provider (oidc-provider.ts) uses.
declare module 'oidc-provider' {
  import type { RequestListener } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface Context {
    oidc: {
      client?: { clientId: string };
      session?: { accountId?: string };
      provider: { Grant: new (init: { clientId: string; accountId: string }) => Grant };
    };
  }
  interface Account {
    accountId: string;
    claims(): Record<string, unknown>;
  }
  export interface Configuration {
    clients: Array<Record<string, unknown>>;
    jwks: { keys: unknown[] };
    claims: Record<string, string[]>;
    cookies: { keys: string[] };
    pkce: { required: () => boolean };
    features: Record<string, { enabled: boolean }>;
    findAccount(ctx: Context, sub: string): Promise<Account | undefined>;
    loadExistingGrant(ctx: Context): Promise<Grant | undefined>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): RequestListener;
  }
}
