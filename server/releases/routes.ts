import type { Request } from 'express';
import type { AppContext } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import { VERSION_PATTERN } from '../contract/versions.js';
import type { Releases } from './releases.js';


/** The address this request reached the controller at: the configured public origin, else scheme and Host. */
export function baseUrlOf(req: Request, publicOrigin: string | undefined): string {
  if (publicOrigin) return publicOrigin;
  const host = req.get('host') ?? '';
  // It ends up inside a shell command and the installer: only a plain host[:port] is taken.
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(host)) throw badRequest('invalid Host header');
  // Behind TRUST_PROXY, req.protocol is the proxy's X-Forwarded-Proto, any text: only the two schemes
  // are believed, anything else is the scheme of the connection itself.
  const scheme = req.protocol === 'https' || req.protocol === 'http' ? req.protocol : 'encrypted' in req.socket ? 'https' : 'http';
  return `${scheme}://${host}`;
}

/** The public release files: their integrity comes from the signature, not the transport. */
export function registerReleaseRoutes(routes: RouteTable, ctx: AppContext, releases: Releases): void {
  routes.on('GET /api/agent/releases/manifest.json', { access: 'public' }, (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('application/json').send(releases.manifest().bytes);
  });

  routes.on('GET /api/agent/releases/manifest.json.sig', { access: 'public' }, (_req, res) => {
    res.set('Cache-Control', 'no-cache').type('text/plain').send(releases.manifest().signature + '\n');
  });

  routes.on('GET /api/agent/releases/:version/host-agent.sh', { access: 'public' }, (req, res, { params }) => {
    const version = params.version ?? '';
    const bytes = VERSION_PATTERN.test(version) ? releases.agentFile(version) : undefined;
    if (!bytes) throw notFound('agent version not found');
    res.set('Cache-Control', 'no-cache').type('text/x-shellscript').send(bytes);
  });

  routes.on('GET /install/agent.sh', { access: 'public' }, (req, res) => {
    const script = releases.installer(baseUrlOf(req, ctx.config.publicOrigin));
    if (script === undefined) {
      res.status(404).type('text/plain').send('echo "homefleet: this server ships no agent installer (reporter/install-agent.sh is missing)" >&2; exit 1\n');
      return;
    }
    res.set('Cache-Control', 'no-cache').type('text/x-shellscript').send(script);
  });
}
