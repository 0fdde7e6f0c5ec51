/** The signal of one model call, and how to let go of it when the call has ended. */
export interface CallSignal {
  signal: AbortSignal;
  /** Stops listening to the sources: after it, nothing long-lived holds this call. */
  release(): void;
}

/**
 * A signal aborted when any of `sources` is (the turn's, the client's close),
 * made for one call and let go of by `release` when the call ends. Handed the
 * client's own signal, which lives as long as the client (or `AbortSignal.any`
 * over it), the openai SDK's abort listener — it adds one to the signal it is
 * given and never removes it — kept every request's controller, signal and
 * closure for the client's life: two AbortSignals and an AbortController more a
 * model call, measured.
 */
export function callSignal(...sources: (AbortSignal | undefined)[]): CallSignal {
  const controller = new AbortController();
  const live = sources.filter((source): source is AbortSignal => source !== undefined);
  const aborted = live.find((source) => source.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release: () => {} };
  }
  const release = () => {
    for (const source of live) source.removeEventListener("abort", onAbort);
  };
  function onAbort(event: Event): void {
    release();
    controller.abort((event.target as AbortSignal).reason);
  }
  for (const source of live) source.addEventListener("abort", onAbort);
  return { signal: controller.signal, release };
}
