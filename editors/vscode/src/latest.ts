/**
 * Debounced "latest answer wins" scheduling for the status bar: typing and selecting poke
 * it many times a second, only the last poke after a quiet period asks the server, an
 * older request still in flight is cancelled, and an answer that arrives after a newer
 * poke is dropped so the status bar never shows a stale count.
 */

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class LatestOnly<T> {
  private timer: unknown;
  private inFlight: AbortController | undefined;
  private generation = 0;

  constructor(
    private readonly delayMs: number,
    private readonly fetch: (signal: AbortSignal) => Promise<T>,
    private readonly apply: (value: T) => void,
    private readonly fail: (error: unknown) => void,
    private readonly timers: Timers = realTimers,
  ) {}

  /** Something changed: ask again once things have been quiet for `delayMs`. */
  poke(): void {
    this.generation += 1;
    this.inFlight?.abort();
    this.inFlight = undefined;
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
    }
    this.timer = this.timers.setTimeout(() => this.run(), this.delayMs);
  }

  dispose(): void {
    this.generation += 1;
    this.inFlight?.abort();
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
    }
    this.timer = undefined;
  }

  private run(): void {
    this.timer = undefined;
    const generation = this.generation;
    const controller = new AbortController();
    this.inFlight = controller;
    this.fetch(controller.signal).then(
      (value) => {
        if (generation === this.generation) {
          this.inFlight = undefined;
          this.apply(value);
        }
      },
      (error: unknown) => {
        if (generation === this.generation) {
          this.inFlight = undefined;
          this.fail(error);
        }
      },
    );
  }
}
