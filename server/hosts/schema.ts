import { isIP } from 'node:net';
import * as z from 'zod';
import { guestReport, heartbeatBody, type Heartbeat } from '../contract/inputs/hosts.js';
import { StorageVolumesBody, type StorageVolumesUpload } from '../contract/inputs/storage.js';
import { validationFailed } from '../errors.js';
import { fieldErrors } from '../http/validate.js';
import { nextTurn } from '../tasks.js';

/** POST /api/agent/heartbeat (server/contract/inputs/hosts.ts), its addresses checked by node:net. */
export const HeartbeatBody = z.lazy(() => heartbeatBody(isIP));
/** As the server reads it: times in ms, counts as numbers. */
export type HeartbeatBody = Heartbeat;

/** The heartbeat without its guests' fields, which parseHeartbeat checks a slice at a time. */
const HeartbeatEnvelope = z.lazy(() =>
  HeartbeatBody.unwrap().extend({
    guests: z.array(z.unknown(), { error: 'must be an array of guests' }).max(10_000, { error: 'must hold at most 10000 guests' }),
  }),
);
const GUESTS_PER_TURN = 500;

/**
 * HeartbeatBody's parse, its guests checked 500 at a time, each slice in its own turn of the event
 * loop: 10,000 guests with their numbers are a quarter of a second of checking, which other
 * requests would otherwise wait out. Throws the same 400 (`guests.3.name`) as the schema would.
 */
export async function parseHeartbeat(value: unknown): Promise<HeartbeatBody> {
  const envelope = HeartbeatEnvelope.safeParse(value);
  const issues = envelope.success ? [] : [...envelope.error.issues];
  // The guests are checked even when the rest is wrong: the 400 names every bad field at once.
  const given = (value as { guests?: unknown } | null)?.guests;
  const raw = envelope.success ? envelope.data.guests : Array.isArray(given) && given.length <= 10_000 ? (given as unknown[]) : [];
  const guests: HeartbeatBody['guests'] = [];
  const schema = guestReport();
  for (let start = 0; start < raw.length; start += GUESTS_PER_TURN) {
    if (start > 0) await nextTurn();
    raw.slice(start, start + GUESTS_PER_TURN).forEach((guest, i) => {
      const parsed = schema.safeParse(guest);
      if (parsed.success) guests.push(parsed.data);
      else issues.push(...parsed.error.issues.map((issue) => ({ ...issue, path: ['guests', start + i, ...issue.path] })));
    });
  }
  if (issues.length || !envelope.success) throw validationFailed(fieldErrors(new z.ZodError(issues)));
  return { ...envelope.data, guests };
}

/** StorageVolumesBody without its volumes' fields, which parseStorageVolumes checks a slice at a time. */
const VolumesEnvelope = z.lazy(() =>
  StorageVolumesBody.unwrap().extend({
    volumes: z.array(z.unknown(), { error: 'must be a list of volumes' }).max(10_000, { error: 'must hold at most 10000 volumes' }),
  }),
);
const VOLUMES_PER_TURN = 500;

/**
 * StorageVolumesBody's parse, 500 volumes per turn of the event loop (10,000 are about 50 ms of
 * checking), with the same answers: a 400 naming each bad field (`volumes.3.volid`).
 */
export async function parseStorageVolumes(value: unknown): Promise<StorageVolumesUpload> {
  const envelope = VolumesEnvelope.safeParse(value);
  const issues = envelope.success ? [] : [...envelope.error.issues];
  const given = (value as { volumes?: unknown } | null)?.volumes;
  const raw = envelope.success ? envelope.data.volumes : Array.isArray(given) && given.length <= 10_000 ? (given as unknown[]) : [];
  const volumes: StorageVolumesUpload['volumes'] = [];
  const schema = StorageVolumesBody.unwrap().shape.volumes.element;
  for (let start = 0; start < raw.length; start += VOLUMES_PER_TURN) {
    if (start > 0) await nextTurn();
    raw.slice(start, start + VOLUMES_PER_TURN).forEach((volume, i) => {
      const parsed = schema.safeParse(volume);
      if (parsed.success) volumes.push(parsed.data);
      else issues.push(...parsed.error.issues.map((issue) => ({ ...issue, path: ['volumes', start + i, ...issue.path] })));
    });
  }
  if (issues.length || !envelope.success) throw validationFailed(fieldErrors(new z.ZodError(issues)));
  return { ...envelope.data, volumes };
}
