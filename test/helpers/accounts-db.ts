import type { Role } from '../../server/contract/access.js';
import { createApp } from '../../server/app.js';
import { TEST_PASSWORD_COST } from './server.js';

/**
 * Writes accounts and their personal API tokens into the database file at `dbPath` through the app's
 * own services (the built server is started on the file afterwards); returns each account's tokens,
 * in order. Passwords are `password-of-<username>`, hashed at the tests' low cost (the hash says its
 * cost, so the built server checks them as written): a hundred accounts at the product's cost took
 * half a minute of CPU.
 */
export async function accountsWithTokens(dbPath: string, accounts: Array<{ username: string; role: Role; tokens: number }>): Promise<string[][]> {
  const app = createApp({ dbPath, passwordCost: TEST_PASSWORD_COST, config: { logLevel: 'silent', snapshotIntervalHours: 0 } });
  try {
    const { tokens } = app;
    const made = await Promise.all(
      accounts.map(({ username, role }) => app.accounts.create({ username, display_name: username, role, password: `password-of-${username}` })),
    );
    return made.map((account, i) =>
      Array.from({ length: accounts[i]!.tokens }, (_, k) => tokens.create({ name: `token ${k}`, role: account.role }, { id: account.id, username: account.username, role: account.role }).token),
    );
  } finally {
    await app.close();
  }
}
