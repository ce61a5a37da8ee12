// The layers of homefleet and the arrows allowed between them, checked by `npm test`
// (build/layering.test.ts runs `depcruise --config build/dependency-cruiser.cjs server renderer electron`).
//
//   contract   server/contract/: the wire types, enums, role table and live events; zod-free and node-free,
//              except server/contract/inputs/: the zod schemas of what routes take, whose types the rest
//              of the contract and the dashboard import type-only (erased from the bundle)
//   kernel     server/{context,config,errors,bus,tasks,time,logger,audit,builtin,memory,private-files,version}.ts,
//              server/db/, server/http/, server/tls/: what every feature builds on
//   features   every other folder of server/ (access, backup, events, hosts, jobs, registry, ...)
//   roots      server/{app,services,main,fatal,recover,backup-sources,import-helper}.ts: the composition roots, which build and wire everything
//   renderer   the dashboard: its own files, the contract, preact and uPlot
//
// Allowed: features → kernel, contract; hosts → registry, releases; operations → hosts' repo, parts, tokens and removal,
// the registry's service, releases; jobs → registry; events → access; signin → access/api.ts;
// backup → the registry's and the jobs' schema.ts; monitoring → metrics, alerts, notifications; roots → anything in server/. Nothing else.
const path = require('node:path');

const CONTRACT = '^server/contract/';
const INPUTS = '^server/contract/inputs/';
const KERNEL = '^server/((context|config|errors|bus|tasks|time|logger|audit|builtin|memory|private-files|version)[.]ts$|types[.]d[.]ts$|(db|http|tls)/)';
const ROOTS = '^server/(app|services|main|fatal|recover|backup-sources|import-helper)[.]ts$';
const TESTS = '([.]test[.]tsx?$|/testing/)';

/**
 * Arrows that break the rules in code another change is still rewriting, allowed by name until it
 * lands (`hosts: ['^server/access/audit[.]ts$']`, with a comment saying which change): delete the
 * entry then, and the check fails again if the arrow is still there. None today.
 */
const TEMPORARY = {};

/** A feature folder's own rule: from `feature`, nothing in server/ but itself, the kernel, the contract and `also`. */
function featureRule(feature, also, comment) {
  return {
    name: `${feature}-imports-only-kernel-contract-and-its-arrow`,
    comment,
    severity: 'error',
    from: { path: `^server/(${feature})/`, pathNot: TESTS },
    to: { path: '^server/', pathNot: ['^server/$1/', KERNEL, CONTRACT, ...also, ...(TEMPORARY[feature] ?? [])] },
  };
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle makes modules that cannot be read, tested or loaded one without the other; it is how context.ts once reached hosts and back.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'renderer-imports-only-contract',
      comment:
        'The dashboard reads the server only through its wire types (server/contract/): a service, repo or schema module would drag server code and zod into the bundle, and let the dashboard depend on what the wire does not promise. Tests included: they check the same code.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: '^(server|electron|build|reporter)/', pathNot: CONTRACT },
    },
    {
      name: 'renderer-reads-input-schemas-only-as-types',
      comment:
        'An input\'s type is its zod schema\'s (server/contract/inputs/): the dashboard takes the type with `import type`, which esbuild erases; a value import would bundle the schema and zod with it.',
      severity: 'error',
      from: { path: '^renderer/' },
      to: { path: INPUTS, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'renderer-bundles-only-its-libraries',
      comment:
        'What the browser loads: preact, preact-iso, uPlot, and @simplewebauthn/browser (loaded with import() by the passkey prompts only). Anything else from npm (zod!) or a node: module would grow the bundle or fail in the browser. Tests run in node and may use vitest.',
      severity: 'error',
      from: { path: '^renderer/', pathNot: TESTS },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown', 'core'], pathNot: '(^|/)node_modules/(preact|preact-iso|uplot|@simplewebauthn/browser)/' },
    },
    {
      name: 'contract-imports-only-contract',
      comment:
        'The contract is what the server and the dashboard share: it must load in both, so it imports no server module, no npm package (zod) and no node: module.',
      severity: 'error',
      from: { path: CONTRACT, pathNot: [INPUTS, TESTS] },
      to: { pathNot: CONTRACT },
    },
    {
      name: 'contract-reads-input-schemas-only-as-types',
      comment:
        'The route map and the answers name an input by its schema\'s type (server/contract/inputs/); a value import would make the contract load zod, in the dashboard too.',
      severity: 'error',
      from: { path: CONTRACT, pathNot: [INPUTS, TESTS] },
      to: { path: INPUTS, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'input-schemas-import-only-zod-and-the-contract',
      comment:
        'An input schema is the one declaration of what a route takes, read by the server, the route map and the dashboard\'s types: it is built from zod and the contract\'s names alone. A runtime need (node:net, the server\'s time zone) is a parameter of a schema factory that the server fills in.',
      severity: 'error',
      from: { path: INPUTS, pathNot: TESTS },
      to: { pathNot: [CONTRACT, '(^|/)node_modules/zod/'] },
    },
    {
      name: 'kernel-imports-no-feature',
      comment:
        'The kernel is what features build on; an arrow back up makes it know a feature (the cycle context.ts → hosts → registry → context.ts was one). Features hand the kernel what it needs (bus events by declaration merging, credential resolvers from the composition root).',
      severity: 'error',
      from: { path: KERNEL, pathNot: TESTS },
      to: { path: '^server/', pathNot: [KERNEL, CONTRACT] },
    },
    {
      name: 'server-imports-no-ui',
      comment: 'The server knows neither the dashboard nor the desktop shell; the shell starts the server, not the other way round.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^(renderer|electron)/' },
    },
    {
      name: 'electron-imports-no-renderer',
      comment: 'The desktop shell loads the built dashboard by URL, as a browser does; importing its source would bundle it into the main process.',
      severity: 'error',
      from: { path: '^electron/' },
      to: { path: '^renderer/' },
    },
    featureRule(
      'hosts',
      ['^server/registry/', '^server/releases/'],
      'Hosts turn drift into registry changes through the registry\'s own service (history, rules), so hosts → registry; a host\'s page shows its upgrade and the versions on offer, and enrollment answers with the current agent, read from the releases (hosts → releases; releases know no host); nothing else. A heartbeat\'s metric fields are held to hosts\' own schema, typed from the contract; the metric store takes the parsed values through services.ts, so hosts import no metrics.',
    ),
    featureRule(
      'operations',
      ['^server/hosts/(repo|parts|tokens|removal)[.]ts$', '^server/registry/service[.]ts$', '^server/releases/(releases|upgrades|channels)[.]ts$'],
      'An operation is a command to one host: operations read and move the host\'s row (an upgrade, a removal) through the hosts\' own repo and check the agent\'s host token the hosts\' way, and the uninstall command hands out the removal hosts made, with its receipt (operations → hosts/repo.ts, parts.ts, tokens.ts, removal.ts); a clone or destroy changes the registry through its own service (operations → registry/service.ts); an upgrade offers a version the releases ship and moves by their rules, along the host’s channel and pin (operations → releases). Hosts know operations only through the functions the composition root hands them (commands for a heartbeat answer, the sweep, an upgrade request, the rows of each host’s upgrades and removals, from server/operations/host-repo.ts), so the arrow goes one way.',
    ),
    featureRule('jobs', ['^server/registry/'], 'Sync jobs change instances through the registry\'s update path (history as job:<key>), so jobs → registry; nothing else.'),
    featureRule('events', ['^server/access/'], 'The event stream re-checks the session it was opened with (access), so events → access; nothing else.'),
    featureRule(
      'signin',
      ['^server/access/api[.]ts$'],
      'Single sign-on, TOTP and passkeys end in the session a password login opens, counted by the same throttle windows and written by the same account rules: signin uses access\'s accounts, sessions, throttle and cookies, and only through access/api.ts, which re-exports exactly that (signin → access/api.ts), so what access offers signin is one short file to read; access knows signin only through the hook the composition root hands it.',
    ),
    featureRule(
      'backup',
      ['^server/(registry|jobs)/schema[.]ts$'],
      'A restored row is held to the rules of the feature that owns it: backup validates instances and jobs with their own schemas (one rule set, not a copy), and takes nothing else from them.',
    ),
    featureRule(
      'monitoring',
      ['^server/(metrics|alerts|notifications)/'],
      'Monitoring builds the metric store, the alert rules and the notification channels together and hands each what it reads of the others, so monitoring → metrics, alerts, notifications; what it reads of hosts, the registry, jobs and snapshots comes through the services the composition root hands it, typed by the contract.',
    ),
    {
      name: 'feature-imports-only-kernel-contract',
      comment:
        'A feature folder stands on the kernel and the contract; what it needs of another feature is handed to it by the composition root (server/services.ts, server/app.ts). The folders with an allowed arrow have their own rule above.',
      severity: 'error',
      from: { path: '^server/([^/]+)/', pathNot: ['^server/(contract|db|http|tls|hosts|operations|jobs|events|backup|signin|monitoring)/', TESTS] },
      to: { path: '^server/', pathNot: ['^server/$1/', KERNEL, CONTRACT] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type import across a boundary is still a dependency on what the other side declares.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: path.join(__dirname, '..', 'tsconfig.json') },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.d.ts', '.json'] },
    exclude: { path: '^dist/' },
  },
};
