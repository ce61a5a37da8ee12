// Its own chunk (loaded with import()): @simplewebauthn/browser stays out of the first load.
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { api } from '../api';
import type { UserAnswer } from '../../server/contract/access';
import type { PasskeyProof } from '../../server/contract/inputs/signin';
import type { Passkey } from '../../server/contract/signin';

/** A WebAuthn answer as the JSON object the contract takes. */
const json = (value: object) => value as Record<string, unknown>;

/** The browser's passkey prompt for this site, answered to the server: a session like a password login's. */
export async function signInWithPasskey(): Promise<UserAnswer['user']> {
  const optionsJSON = await api('POST /api/auth/passkeys/options');
  const response = await startAuthentication({ optionsJSON });
  const { user } = await api('POST /api/auth/passkeys/verify', { body: { response: json(response) } });
  return user;
}

/** The second step of a password sign-in: one of the account's passkeys, answered to the server. */
export async function confirmWithPasskey(): Promise<UserAnswer['user']> {
  const optionsJSON = await api('POST /api/auth/login/passkey/options');
  const response = await startAuthentication({ optionsJSON });
  const { user } = await api('POST /api/auth/login/passkey', { body: { response: json(response) } });
  return user;
}

/** Registers a new passkey of the signed-in account under `name`, after the password (or a code) confirms it is them. */
export async function registerPasskey(name: string, proof: PasskeyProof): Promise<Passkey> {
  // The contract names only the challenge of WebAuthn's options; @simplewebauthn/browser knows the rest.
  const optionsJSON = (await api('POST /api/auth/passkeys/register/options', { body: proof })) as Parameters<typeof startRegistration>[0]['optionsJSON'];
  const response = await startRegistration({ optionsJSON });
  return api('POST /api/auth/passkeys/register/verify', { body: { name, response: json(response) } });
}
