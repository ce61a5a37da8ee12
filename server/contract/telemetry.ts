/** One stored telemetry event, as GET /api/telemetry lists them (newest first, paged). */
export interface TelemetryEvent {
  id: number;
  received_at: string;
  /** The JSON object the sender posted, as it was. */
  event: unknown;
}

/** POST /api/telemetry (202): how many events of the body were stored. */
export interface TelemetryAccepted {
  accepted: number;
}
