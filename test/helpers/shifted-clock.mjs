// Loaded into a built server's process with `--import` (startHeadless's `clockShiftMs`, which sets
// HOMEFLEET_TEST_CLOCK_SHIFT_MS): the server's `Date.now()` runs that many milliseconds ahead of the
// machine's, like libfaketime, without a change to the bundle under test. The server reads the time
// only through `Date.now()` (server/time.ts, systemClock), so its throttle windows, TOTP steps and
// expiries all move together; a test computes what it sends against the same shifted clock.
const shift = Number(process.env.HOMEFLEET_TEST_CLOCK_SHIFT_MS);
if (Number.isFinite(shift) && shift !== 0) {
  const machineNow = Date.now;
  Date.now = () => machineNow() + shift;
}
