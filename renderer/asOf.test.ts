import { describe, expect, it } from 'vitest';
import { atToInput, inputToAt, parseAt, vmidAt } from './asOf';

describe('as of', () => {
  it('reads the date-time input in UTC, seconds optional; anything else is now', () => {
    expect(inputToAt('2026-11-22T10:15')).toBe('2026-11-22T10:15:00Z');
    expect(inputToAt('2026-11-22T10:15:30')).toBe('2026-11-22T10:15:30Z');
    expect(inputToAt('2026-11-22T10:15:30.250')).toBe('2026-11-22T10:15:30.250Z');
    for (const value of ['', '2026-11-22', 'now', '2026-11-22T10:15Z', '2026-11-22T25:00']) expect([value, inputToAt(value)]).toEqual([value, '']);
  });
  it('writes an instant back into the input to the second', () => {
    expect(atToInput('2026-11-22T10:15:30.250Z')).toBe('2026-11-22T10:15:30');
    expect(atToInput('')).toBe('');
  });
  it('keeps an `at` from the URL only when it is a UTC instant', () => {
    expect(parseAt('2026-11-22T10:15:30.250Z')).toBe('2026-11-22T10:15:30.250Z');
    for (const value of [null, '', 'yesterday', '2026-11-22T10:15:30', '2026-11-22T10:15:30+01:00', '2026-13-01T00:00:00Z']) expect(parseAt(value)).toBe('');
  });
  it('finds the vmid an instance had then from its vmid changes after that instant', () => {
    const history = [
      { field: 'vmid', old_value: '210', new_value: '220', changed_at: '2026-11-22T12:00:00.000Z' },
      { field: 'name', old_value: 'a', new_value: 'b', changed_at: '2026-11-22T11:30:00.000Z' },
      { field: 'vmid', old_value: '200', new_value: '210', changed_at: '2026-11-22T11:00:00.000Z' },
      { field: 'created', old_value: null, new_value: null, changed_at: '2026-11-22T10:00:00.000Z' },
    ];
    expect(vmidAt(history, 220, '2026-11-22T10:30:00Z')).toBe(200);
    expect(vmidAt(history, 220, '2026-11-22T11:00:00Z')).toBe(210);
    expect(vmidAt(history, 220, '2026-11-22T11:59:59.999Z')).toBe(210);
    expect(vmidAt(history, 220, '2026-11-22T12:00:00Z')).toBe(220);
  });
});
