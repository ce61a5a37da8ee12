import * as z from 'zod';

/** GET /api/events?last_event_id=: where a new connection that cannot send the Last-Event-ID header resumes. */
export const EventsQuery = z.lazy(() =>
  z.object({
    last_event_id: z.string().optional().describe('The last event id seen, for a new connection that cannot send the Last-Event-ID header'),
  }),
);
export type EventsQuery = z.output<typeof EventsQuery>;
