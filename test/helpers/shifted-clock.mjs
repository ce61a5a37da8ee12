// Loaded into a built server's process with `--import` (startHeadless's `clockShiftMs`, which sets
// HOMEFLEET_TEST_CLOCK_SHIFT_MS): the server's `Date.now()` runs that many milliseconds ahead of the
// machine's, like libfaketime, without a change to the bundle under test. The server's clock
// (server/time.ts, systemClock) is `Date.now()`, so its throttle windows, TOTP steps and session
// expiries move together; a test computes what it sends against the same shifted clock. (`new Date()`
// with no argument keeps the machine's time: snapshot names and campaign wake-ups, which these tests
// do not reach.)
const shift = Number(process.env.HOMEFLEET_TEST_CLOCK_SHIFT_MS);
if (Number.isFinite(shift) && shift !== 0) {
  const machineNow = Date.now;
  Date.now = () => machineNow() + shift;
}
