import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LatestOnly, Timers } from '../src/latest';

/** Timers driven by hand, so the tests say exactly when the quiet period ends. */
class ManualTimers implements Timers {
  private pending = new Map<number, () => void>();
  private next = 0;

  setTimeout(callback: () => void): unknown {
    this.next += 1;
    this.pending.set(this.next, callback);
    return this.next;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  get count(): number {
    return this.pending.size;
  }

  fire(): void {
    const callbacks = [...this.pending.values()];
    this.pending.clear();
    callbacks.forEach((callback) => callback());
  }
}

/** A fetch whose answers the test releases one by one. */
function deferredFetch() {
  const calls: { signal: AbortSignal; resolve: (value: number) => void; reject: (error: Error) => void }[] = [];
  const fetch = (signal: AbortSignal) =>
    new Promise<number>((resolve, reject) => calls.push({ signal, resolve, reject }));
  return { calls, fetch };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('LatestOnly', () => {
  it('asks once after a burst of pokes', () => {
    const timers = new ManualTimers();
    const { calls, fetch } = deferredFetch();
    const latest = new LatestOnly(150, fetch, () => undefined, () => undefined, timers);
    latest.poke();
    latest.poke();
    latest.poke();
    assert.equal(timers.count, 1);
    assert.equal(calls.length, 0);
    timers.fire();
    assert.equal(calls.length, 1);
  });

  it('drops an answer overtaken by a newer poke and cancels its request', async () => {
    const timers = new ManualTimers();
    const { calls, fetch } = deferredFetch();
    const shown: number[] = [];
    const latest = new LatestOnly(150, fetch, (value) => shown.push(value), () => undefined, timers);
    latest.poke();
    timers.fire();
    latest.poke();
    assert.equal(calls[0].signal.aborted, true);
    timers.fire();
    calls[1].resolve(2);
    calls[0].resolve(1);
    await settle();
    assert.deepEqual(shown, [2]);
  });

  it('reports a failure of the latest request only', async () => {
    const timers = new ManualTimers();
    const { calls, fetch } = deferredFetch();
    const failures: unknown[] = [];
    const latest = new LatestOnly(150, fetch, () => undefined, (error) => failures.push(error), timers);
    latest.poke();
    timers.fire();
    latest.poke();
    timers.fire();
    calls[0].reject(new Error('cancelled'));
    calls[1].reject(new Error('server gone'));
    await settle();
    assert.deepEqual(failures.map((error) => (error as Error).message), ['server gone']);
  });

  it('shows nothing after dispose', async () => {
    const timers = new ManualTimers();
    const { calls, fetch } = deferredFetch();
    const shown: number[] = [];
    const latest = new LatestOnly(150, fetch, (value) => shown.push(value), () => undefined, timers);
    latest.poke();
    timers.fire();
    latest.dispose();
    calls[0].resolve(1);
    latest.poke();
    latest.dispose();
    await settle();
    assert.equal(timers.count, 0);
    assert.deepEqual(shown, []);
  });

  it('waits the configured delay with real timers', async () => {
    const { calls, fetch } = deferredFetch();
    const latest = new LatestOnly(30, fetch, () => undefined, () => undefined);
    const started = Date.now();
    latest.poke();
    while (calls.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.ok(Date.now() - started >= 25);
    latest.dispose();
  });
});
