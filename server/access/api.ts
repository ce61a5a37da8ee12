// What sign-in (server/signin) may use of access, and nothing more (build/dependency-cruiser.cjs holds
// signin to this file): a second factor, single sign-on or a passkey ends in the session a password
// login opens, counted by the same throttle and written by the same account rules.
export { ANONYMOUS, from, invalidCredentials, loginSubject, presentAccount, userSubject, type AccountOptions, type AccountService } from './accounts.js';
export { clearStepCookie, readSealedCookie, readStepCookie, setSessionCookie, setStepCookie } from './cookies.js';
export { createExpiringMap } from './expiring.js';
export { allowedOrigins, originAllowed, plainHttpLoginAllowed, requireOrigin, requireSecureTransport } from './origin.js';
export { hashPassword, verifyPassword } from './passwords.js';
export { PENDING_COOKIE } from './pending.js';
export type { AccountRow } from './repo.js';
export { createSealer, type Sealer } from './sealed.js';
export type { ThrottleKey } from './throttle.js';
