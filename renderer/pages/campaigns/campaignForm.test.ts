import { describe, expect, it } from 'vitest';
import { BLANK_FORM, campaignBody, finishedWords, stepWords, took } from './campaignForm';

describe('the New campaign form', () => {
  it('makes the body of a reboot over guests, two at a time', () => {
    expect(campaignBody({ ...BLANK_FORM, name: ' patch web ', targetText: '101, 102 103', waveSize: '2', pauseS: '30' })).toEqual({
      body: { name: 'patch web', target: { vmids: [101, 102, 103] }, step: { type: 'guest.action', action: 'reboot' }, wave_size: 2, pause_s: 30, max_failures: 0, respect_maintenance: true, window_wait_h: 24 },
      errors: {},
    });
  });

  it('names a snapshot, a script, an upgrade, hosts and a collection', () => {
    expect(campaignBody({ ...BLANK_FORM, name: 's', targetKind: 'host_ids', targetText: '1 2', action: 'snapshot', snapshot: 'pre' }).body).toMatchObject({ target: { host_ids: [1, 2] }, step: { type: 'guest.action', action: 'snapshot', name: 'pre' } });
    expect(campaignBody({ ...BLANK_FORM, name: 's', targetKind: 'collection_id', targetText: '4', stepKind: 'script', scriptId: '7' }).body).toMatchObject({ target: { collection_id: 4 }, step: { type: 'script', script_id: 7 } });
    expect(campaignBody({ ...BLANK_FORM, name: 's', targetKind: 'host_ids', targetText: '1', stepKind: 'agent.upgrade' }).body!.step).toEqual({ type: 'agent.upgrade' });
  });

  it('says which boxes cannot make a body', () => {
    expect(campaignBody({ ...BLANK_FORM, targetText: '101 web', action: 'rollback', waveSize: 'two', windowWaitH: '' }).errors).toEqual({
      name: 'Give the campaign a name.',
      target: 'List ids as whole numbers, separated by spaces or commas.',
      'step.name': 'Name the snapshot.',
      wave_size: 'Give a whole number.',
      window_wait_h: 'Give a number of hours.',
    });
    expect(campaignBody({ ...BLANK_FORM, name: 'x', targetKind: 'collection_id', targetText: '1 2' }).errors).toEqual({ target: 'Name one collection.' });
    expect(campaignBody({ ...BLANK_FORM, name: 'x', targetKind: 'collection_id', targetText: '', stepKind: 'script' }).errors).toEqual({ target: 'Pick a collection.', 'step.script_id': 'Pick a script.' });
  });
});

describe('a campaign in words', () => {
  it('its step, how long it took and what failed', () => {
    expect(stepWords({ type: 'guest.action', action: 'snapshot', name: 'pre' })).toBe('snapshot “pre”');
    expect(stepWords({ type: 'agent.upgrade', version: '1.4.0' })).toBe('agent upgrade to 1.4.0');
    expect(stepWords({ type: 'script', script_id: 3 }, new Map([[3, 'patch-web']]))).toBe('script “patch-web”');
    expect(stepWords({ type: 'script', script_id: 4 }, new Map([[3, 'patch-web']]))).toBe('script #4');
    expect(stepWords({ type: 'agent.upgrade' })).toBe('agent upgrade along each host’s channel');
    expect([took(42), took(185), took(3720)]).toEqual(['42 s', '3 min 5 s', '1 h 2 min']);
    const counts = { pending: 0, waiting: 0, running: 0, succeeded: 3, failed: 1, skipped: 2, cancelled: 0 };
    expect(finishedWords({ status: 'failed', duration_s: 12.4, counts }, [{ status: 'failed', vmid: 103, name: 'web-3', reason: 'failed (exit 1)' }])).toBe('Stopped after 12 s. 1 failed: 103 “web-3” (failed (exit 1)). 2 skipped.');
    expect(finishedWords({ status: 'succeeded', duration_s: 65, counts: { ...counts, failed: 0, skipped: 0 } }, [])).toBe('Done after 1 min 5 s. Nothing failed.');
    expect(finishedWords({ status: 'running', duration_s: null, counts }, [])).toBeUndefined();
  });
});
