/** The first-administrator page: plain HTML and a form, no script at all. */

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const SETUP_PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // The page URL may carry the setup token: never send it to another site as a Referer, never cache it.
  // Not `no-referrer`: under it Chromium sends `Origin: null` with the form's POST, which the Origin
  // check rightly refuses, and setup cannot be completed from a browser.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

// The dashboard's sign-in card (renderer/styles.css: .auth-page, .card, .field, .primary, .notice-error),
// inline because this page carries no script and loads nothing else.
const STYLE = `:root{color-scheme:light dark;--bg:#f6f7f9;--surface:#fff;--text:#1b1f24;--muted:#5b6470;--border:#d9dde3;--accent:#2458d3;--accent-text:#fff;--focus:#2458d3;--danger:#b42318;--danger-bg:#fdecea}
@media (prefers-color-scheme:dark){:root{--bg:#0f1217;--surface:#171b22;--text:#e6e9ee;--muted:#9aa4b2;--border:#2c333e;--accent:#7aa2ff;--accent-text:#0b1020;--focus:#9db9ff;--danger:#ff8a80;--danger-bg:#3a1714}}
*{box-sizing:border-box}
html,body{margin:0;background:var(--bg);color:var(--text);font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}
body{min-height:100vh;display:grid;place-items:center;padding:1rem}
main{width:100%;max-width:24rem;background:var(--surface);border:1px solid var(--border);border-radius:8px;padding:1.25rem 1.5rem}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px;border-radius:4px}
.brand{font-weight:700;font-size:1.1rem;margin:0 0 .5rem}
h1{font-size:1.35rem;margin:0 0 .75rem}
p{margin:0 0 1rem}
label{display:block;font-weight:600;font-size:.875rem;margin:0 0 .25rem}
input{display:block;width:100%;margin:0 0 .85rem;padding:.45rem .6rem;font:inherit;color:var(--text);background:var(--surface);border:1px solid var(--border);border-radius:6px}
button{width:100%;margin-top:.35rem;padding:.5rem .9rem;font:inherit;font-weight:600;background:var(--accent);color:var(--accent-text);border:1px solid var(--accent);border-radius:6px;cursor:pointer}
.error{background:var(--danger-bg);color:var(--danger);border:1px solid var(--danger);border-radius:6px;padding:.6rem .8rem .6rem 1.8rem;margin:0 0 1rem}
.hint{color:var(--muted);font-size:.875rem;margin:-.6rem 0 .85rem}`;

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · homefleet</title><style>${STYLE}</style></head><body><main><p class="brand">homefleet</p><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

export interface SetupFormValues {
  setup_token?: string;
  username?: string;
  display_name?: string;
}

export function setupFormPage(values: SetupFormValues, errors: string[] = []): string {
  const value = (v: string | undefined) => escapeHtml(v ?? '');
  const errorList = errors.length ? `<ul class="error">${errors.map((e) => `<li>${escapeHtml(e)}</li>`).join('')}</ul>` : '';
  return layout(
    'Create the first administrator',
    `<p>No account exists yet. The holder of the setup token creates the first administrator here.</p>${errorList}
<form method="post" action="/setup">
<label for="setup_token">Setup token</label><input id="setup_token" name="setup_token" type="password" required autocomplete="off" value="${value(values.setup_token)}">
<label for="username">Username</label><input id="username" name="username" required maxlength="64" autocomplete="username" value="${value(values.username)}">
<label for="display_name">Display name</label><input id="display_name" name="display_name" required maxlength="100" value="${value(values.display_name)}">
<label for="password">Password</label><input id="password" name="password" type="password" required minlength="8" maxlength="128" autocomplete="new-password">
<p class="hint">8 to 128 characters.</p>
<label for="password_confirm">Repeat the password</label><input id="password_confirm" name="password_confirm" type="password" required minlength="8" maxlength="128" autocomplete="new-password">
<button type="submit">Create administrator</button>
</form>`,
  );
}

export function setupClosedPage(reason: string): string {
  return layout('Setup is closed', `<p>${escapeHtml(reason)}</p><p><a href="/login">Sign in</a></p>`);
}
