// A promise that may never settle, given a bound: a test then fails on an assertion that names the
// hang ("start() never returned"), not on vitest's timeout, which the mutation runner does not
// count as a kill.

export type Settled<T> = { kind: "resolved"; value: T } | { kind: "rejected"; error: unknown } | { kind: "pending" };

/** How p settled within ms, or pending; the timer never keeps the process alive. */
export function settleWithin<T>(p: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<Settled<T>>((ok) => {
    timer = setTimeout(() => ok({ kind: "pending" }), ms);
    timer.unref();
  });
  return Promise.race([
    p.then(
      (value) => ({ kind: "resolved" as const, value }),
      (error: unknown) => ({ kind: "rejected" as const, error }),
    ),
    bound,
  ]).finally(() => clearTimeout(timer));
}
