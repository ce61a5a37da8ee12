// Tailscale's documented device body, for the sync job's tests (real HTTP servers on loopback serve it).

let serial = 0;
/**
 * One device as Tailscale's API documents it (GET /api/v2/tailnet/{tailnet}/devices; fields the job does
 * not read included): its IPv4 address, and an IPv6 tailnet address of its own.
 */
export function tailscaleDevice(hostname: string, magicDnsName: string, ipv4: string) {
  const id = String(92960230385 + ++serial);
  return {
    addresses: [ipv4, `fd7a:115c:a1e0:ab12:4843:cd96:${serial.toString(16)}:1`],
    id,
    nodeId: `n${id}CNTRL`,
    user: 'amelie@example.com',
    name: `${magicDnsName}.tail1234.ts.net`,
    hostname,
    clientVersion: '1.76.1-t4d1b3ea29-g4b7d9b4ae',
    updateAvailable: false,
    os: 'linux',
    created: '2026-11-01T05:23:30Z',
    lastSeen: '2026-11-22T09:00:00Z',
    keyExpiryDisabled: false,
    expires: '2027-05-30T04:44:05Z',
    authorized: true,
    isExternal: false,
    machineKey: '',
    nodeKey: 'nodekey:01234567890abcdef',
    blocksIncomingConnections: false,
    enabledRoutes: [],
    advertisedRoutes: [],
    clientConnectivity: { endpoints: ['199.9.14.201:59128'], latency: {}, mappingVariesByDestIP: false, clientSupports: { hairPinning: false, ipv6: false, pcp: false, pmp: false, udp: true, upnp: false } },
    tags: [],
    tailnetLockError: '',
    tailnetLockKey: 'nlpub:0123456789abcdef',
  };
}
