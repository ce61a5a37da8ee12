import type { FieldError } from '../contract/common.js';
import { channelOf, compareVersions, type AgentChannel } from '../contract/versions.js';
import { conflict } from '../errors.js';

/**
 * Release channels and pins (PRODUCT.md "Release channels"): "Offered and automatic upgrades follow
 * the host's channel and never move a pinned host." Plain functions of a host's settings and the
 * shipped versions; the callers read and write the rows.
 */
export interface ChannelSettings {
  agent_channel: AgentChannel;
  agent_pin: string | null;
}

/** The newest shipped version for a channel (server/releases/releases.ts `newest`). */
export type NewestOf = (channel: AgentChannel) => string | undefined;

/** The version a host is offered now (`upgrade_available`, automatic upgrades), or undefined: pinned, or nothing newer on its channel. */
export function offeredVersion(host: ChannelSettings & { agent_version: string }, newest: NewestOf): string | undefined {
  if (host.agent_pin !== null) return undefined;
  const version = newest(host.agent_channel);
  return version !== undefined && compareVersions(version, host.agent_version) > 0 ? version : undefined;
}

/**
 * The version an upgrade asked of this host installs: the one asked for, else the pin, else the
 * newest of its channel. A pinned host moves only to its pin, a `stable` host never to a pre-release.
 */
export function requestedVersion(host: ChannelSettings & { hostname: string }, asked: string | undefined, newest: NewestOf): string {
  const pin = host.agent_pin;
  if (pin !== null) {
    if (asked !== undefined && asked !== pin) throw conflict(`host ${host.hostname} is pinned to agent ${pin}: unpin it (agent_pin: null) before moving it to ${asked}`);
    return pin;
  }
  if (asked === undefined) {
    const version = newest(host.agent_channel);
    if (version === undefined) throw conflict(`no agent release is available on the ${host.agent_channel} channel`);
    return version;
  }
  if (host.agent_channel === 'stable' && channelOf(asked) === 'beta') {
    throw conflict(`${asked} is a beta version and host ${host.hostname} follows the stable channel: set its agent_channel to beta first`);
  }
  return asked;
}

/**
 * What is wrong with a host's channel and pin as a PATCH would leave them, field by field: a pin given
 * now must name a version this server ships (`shipped`), and a `stable` host cannot be held at a pre-release.
 */
export function settingsErrors(settings: ChannelSettings, shipped: readonly string[], pinGiven: boolean): FieldError[] {
  const pin = settings.agent_pin;
  if (pin === null) return [];
  if (pinGiven && !shipped.includes(pin)) return [{ field: 'agent_pin', message: `${pin} is not an agent version this server ships (it ships ${shipped.join(', ') || 'none'})` }];
  if (settings.agent_channel === 'stable' && channelOf(pin) === 'beta') {
    return pinGiven
      ? [{ field: 'agent_pin', message: `${pin} is a beta version: set agent_channel to beta to pin the host to it` }]
      : [{ field: 'agent_channel', message: `the host is pinned to the beta version ${pin}: unpin it or pin a stable version first` }];
  }
  return [];
}

/** A pending (not yet offered) upgrade to `version` that the settings no longer allow: it is called off when they are saved. */
export function refusedBy(settings: ChannelSettings, version: string): boolean {
  if (settings.agent_pin !== null) return version !== settings.agent_pin;
  return settings.agent_channel === 'stable' && channelOf(version) === 'beta';
}
