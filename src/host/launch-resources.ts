// What a launch holds while it starts and while its session runs, each with its release, released
// in reverse order of acquisition exactly once: when the launch fails part way (what was acquired
// so far, nothing more) or when the session ends. A release is told which, so the run directory
// goes only with a failed launch and the end-of-session check runs only after a session.

/** How the launch ended: it failed before its session started, or its session ran and ended. */
export type Ending = { kind: "failed"; error: unknown } | { kind: "ended" };

export type Release<T> = (value: T, ending: Ending) => unknown;

/** A release that failed: the others still ran. */
export type ReleaseFailure = { name: string; error: unknown };

export class LaunchResources {
  readonly #held: Array<{ name: string; release: (ending: Ending) => unknown }> = [];
  #released = false;

  /** Records an acquired resource and returns it; its release runs when the launch fails or its session ends. */
  hold<T>(name: string, value: T, release: Release<T>): T {
    if (this.#released) throw new Error(`${name}: acquired after the launch's resources were released`);
    this.#held.push({ name, release: (ending) => release(value, ending) });
    return value;
  }

  /** What is held, oldest first. */
  names(): string[] {
    return this.#held.map((h) => h.name);
  }

  /**
   * Releases everything held, newest first, each awaited before the next; a release that throws
   * does not stop the rest. Once only: a second call releases nothing.
   */
  async release(ending: Ending): Promise<ReleaseFailure[]> {
    if (this.#released) return [];
    this.#released = true;
    const failures: ReleaseFailure[] = [];
    for (const h of this.#held.reverse()) {
      try {
        await h.release(ending);
      } catch (error) {
        failures.push({ name: h.name, error });
      }
    }
    return failures;
  }
}
