import type { Request } from 'express';
import type { Role } from '../contract/access.js';
import type { Actor } from '../contract/audit.js';

export type { Actor };
import type { AgentCredential } from './routes.js';

/** The person a request acts as: a session's account, or a personal API token's owner at the token's role. */
export interface SessionUser {
  id: number;
  username: string;
  role: Role;
}

/** The browser session a request came with (the session row, without its token). */
export interface SessionRef {
  id: number;
  created_at: number;
  last_seen: number;
}

/** A personal API token as audit entries and the event stream name it: never the token itself. */
export interface TokenRef {
  id: number;
  name: string;
}

/**
 * What each kind of agent credential resolves to. Empty here: server/hosts declares its rows
 * (`declare module '../http/credentials.js' { interface AgentCredentials { host: HostRow } }`),
 * so the authentication step stores them typed without knowing hosts.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface AgentCredentials {}
export type AgentCredentialOf<K extends AgentCredential> = K extends keyof AgentCredentials ? AgentCredentials[K] : never;

/** Who a request proved to be: set on `res.locals.auth` by the one authentication step (server/access/authenticate.ts). */
export type Auth =
  | { kind: 'session'; user: SessionUser; session: SessionRef; secondFactorRequired?: true }
  | { kind: 'token'; user: SessionUser; token: TokenRef }
  | { [K in AgentCredential]: { kind: K; credential: AgentCredentialOf<K>; actor: Actor } }[AgentCredential];

/** A person behind a session or a token, and whether a temporary password still stands. */
export interface Principal {
  user: SessionUser;
  mustChangePassword: boolean;
  /** FLEET_REQUIRE_2FA applies to the account and it has no second factor yet (server/signin). */
  secondFactorRequired?: boolean;
}

/**
 * How each kind of credential is resolved. The composition root (server/app.ts) hands these to the
 * authentication step, built from the features that own them (accounts, tokens, hosts), so access
 * imports none of them.
 */
export interface CredentialResolvers {
  /** The live session of a cookie's token; `touch: false` leaves its idle time alone (the event stream). */
  session(token: string, touch: boolean): (Principal & { session: SessionRef }) | undefined;
  /** Personal API tokens: their prefix, and the owner a token stands for (recording its use). */
  token: { prefix: string; resolve(token: string, ip: string | null): (Principal & { token: TokenRef }) | undefined };
  /** Each agent credential: its prefix (refused on every other route), and what the request's token of that kind stands for. */
  agents: { [K in AgentCredential]: AgentResolver<K> };
}

export interface AgentResolver<K extends AgentCredential> {
  prefix: string;
  /** Reads the request's bearer token (and, for a receipt, its operation id); undefined when it is not a usable one of this kind. */
  resolve(req: Request): AgentCredentialOf<K> | undefined;
  /** Who acts with a credential of this kind, for the change log: the agent of its host. */
  actor(credential: AgentCredentialOf<K>): Actor;
}
