import type { Request, Response } from 'express';
import type { AppContext } from '../context.js';
import { forbidden, HttpError, notFound, tooManyRequests, validationFailed } from '../errors.js';
import { formBody } from '../http/body.js';
import type { RouteTable } from '../http/routes.js';
import { isPlainObject, parseWith } from '../http/validate.js';
import type { AccountService } from './accounts.js';
import { requireOrigin, requireSecureTransport } from './origin.js';
import { SetupBody } from '../contract/inputs/access.js';
import { SETUP_PAGE_HEADERS, setupClosedPage, setupFormPage } from './setup-page.js';
import { secretsEqual } from '../http/secrets.js';

/** `GET /setup` and `POST /setup`: the first administrator, by the holder of FLEET_SETUP_TOKEN, while no account exists. */
export function registerSetupRoutes(routes: RouteTable, ctx: AppContext, accounts: AccountService): void {
  const closedReason = (): string | undefined => {
    if (accounts.hasAccounts()) return 'An account already exists, so first-administrator setup is closed. Remove FLEET_SETUP_TOKEN and restart the server.';
    if (!ctx.config.setupToken) return 'Setup is closed because FLEET_SETUP_TOKEN is not set. Set it and restart the server to create the first administrator.';
    return undefined;
  };

  routes.on('GET /setup', { access: 'public' }, (req, res) => {
    const reason = closedReason();
    res.set(SETUP_PAGE_HEADERS);
    if (reason) return void res.status(404).send(setupClosedPage(reason));
    const token = typeof req.query.token === 'string' ? req.query.token : undefined;
    res.status(200).send(setupFormPage({ setup_token: token }));
  });

  const form = formBody('16kb', 20);
  routes.on('POST /setup',
    { access: 'public', before: [requireOrigin(ctx.config), requireSecureTransport(ctx.config), form], bodyLimit: '16kb' },
    async (req: Request, res: Response) => {
      const isForm = Boolean(req.is('application/x-www-form-urlencoded'));
      const body: Record<string, unknown> = isPlainObject(req.body) ? req.body : {};
      try {
        const user = await setUp(body, req.ip ?? null);
        // The sign-in page says the administrator was created (`setup=done`).
        if (isForm) return void res.redirect(303, '/login?setup=done');
        res.status(201);
        return { user };
      } catch (err) {
        if (!isForm || !(err instanceof HttpError)) throw err;
        const messages = Array.isArray(err.body.errors)
          ? (err.body.errors as Array<{ field: string; message: string }>).map((e) => `${e.field === 'password_confirm' ? 'the repeated password' : e.field.replace('_', ' ')} ${e.message}`)
          : [String(err.body.error)];
        res.status(err.status).set(err.headers).set(SETUP_PAGE_HEADERS);
        const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
        const page = err.status === 404
          ? setupClosedPage(closedReason() ?? 'Setup is closed.')
          : setupFormPage(
              // A right token is kept for the next try (it came prefilled from the link); a refused one is never echoed.
              { setup_token: err.status === 403 ? undefined : text(body.setup_token), username: text(body.username), display_name: text(body.display_name) },
              messages,
            );
        res.send(page);
      }
    },
  );

  async function setUp(body: Record<string, unknown>, ip: string | null) {
    if (closedReason()) throw notFound('setup is closed');
    // The slot is taken before the token is compared or any password hashed, so a parallel burst
    // cannot get more attempts through than the window allows.
    const slot = [['setup.ip', ip ?? '']] as const;
    const wait = accounts.throttle.take(slot);
    if (wait > 0) throw tooManyRequests(wait);
    const given = typeof body.setup_token === 'string' ? body.setup_token : '';
    if (!secretsEqual(given, ctx.config.setupToken!)) throw forbidden('invalid setup token');
    // The right token is not a guess: its slot goes back once this attempt is over.
    try {
      const input = parseWith(SetupBody, body);
      // The form's "Repeat the password" box: a JSON client that sends no password_confirm is not asked for one.
      if ('password_confirm' in body && body.password_confirm !== input.password) {
        throw validationFailed([{ field: 'password_confirm', message: 'does not match the password' }]);
      }
      return await accounts.create(
        { username: input.username, display_name: input.display_name, role: 'administrator', password: input.password },
        'setup',
      );
    } finally {
      accounts.throttle.release(slot);
    }
  }
}
