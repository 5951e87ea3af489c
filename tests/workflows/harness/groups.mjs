//! Concurrency groups as the workflows use them (`queue: max`, `cancel-in-progress: false`): one
//! holder per group, every other job queued first come, first served, none cancelled.
export class ConcurrencyGroups {
  constructor() {
    this.holders = new Map();
    this.queues = new Map();
  }

  /** Wait for `group`; resolves to a function that releases it. */
  acquire(group) {
    return new Promise((resolve) => {
      const grant = () => {
        this.holders.set(group, true);
        resolve(() => this.release(group));
      };
      if (!this.holders.get(group)) grant();
      else {
        if (!this.queues.has(group)) this.queues.set(group, []);
        this.queues.get(group).push(grant);
      }
    });
  }

  release(group) {
    const next = this.queues.get(group)?.shift();
    if (next) next();
    else this.holders.delete(group);
  }
}

/** Check a job's `concurrency` value is one the harness emulates; returns the group name or null. */
export function groupOf(concurrency, where) {
  if (concurrency === undefined || concurrency === null) return null;
  if (typeof concurrency === "string") {
    throw new Error(`${where}: concurrency without queue: max would cancel pending jobs; not emulated`);
  }
  const cancel = concurrency["cancel-in-progress"];
  if (cancel !== undefined && cancel !== false && cancel !== "false") {
    throw new Error(`${where}: cancel-in-progress: ${cancel} is not emulated`);
  }
  if (concurrency.queue !== "max") {
    throw new Error(`${where}: concurrency queue '${concurrency.queue ?? "single"}' is not emulated (only queue: max)`);
  }
  return concurrency.group;
}
