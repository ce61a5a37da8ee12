// Its own chunk (loaded with import()): @simplewebauthn/browser stays out of the first load.
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { api } from '../api';
import type { UserAnswer } from '../../server/contract/access';
import type { Passkey, PasskeyProof } from '../../server/contract/signin';

/** The browser's passkey prompt for this site, answered to the server: a session like a password login's. */
export async function signInWithPasskey(): Promise<UserAnswer['user']> {
  const optionsJSON = await api<Parameters<typeof startAuthentication>[0]['optionsJSON']>('POST', '/api/auth/passkeys/options');
  const response = await startAuthentication({ optionsJSON });
  const { user } = await api<UserAnswer>('POST', '/api/auth/passkeys/verify', { response });
  return user;
}

/** The second step of a password sign-in: one of the account's passkeys, answered to the server. */
export async function confirmWithPasskey(): Promise<UserAnswer['user']> {
  const optionsJSON = await api<Parameters<typeof startAuthentication>[0]['optionsJSON']>('POST', '/api/auth/login/passkey/options');
  const response = await startAuthentication({ optionsJSON });
  const { user } = await api<UserAnswer>('POST', '/api/auth/login/passkey', { response });
  return user;
}

/** Registers a new passkey of the signed-in account under `name`, after the password (or a code) confirms it is them. */
export async function registerPasskey(name: string, proof: PasskeyProof): Promise<Passkey> {
  const optionsJSON = await api<Parameters<typeof startRegistration>[0]['optionsJSON']>('POST', '/api/auth/passkeys/register/options', proof);
  const response = await startRegistration({ optionsJSON });
  return api<Passkey>('POST', '/api/auth/passkeys/register/verify', { name, response });
}
