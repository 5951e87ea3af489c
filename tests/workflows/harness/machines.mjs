//! The scenario's machines as runners: a self-hosted runner runs one job at a time (GitHub assigns
//! a queued job to an idle runner whose labels include every `runs-on` label: "self-hosted runners
//! ... can only run one job at a time"), so jobs of one label set queue for the pool of machines
//! that carry it; a GitHub-hosted label (`ubuntu-latest`) gets a fresh machine for every job.
//! [D:…/self-hosted-runners/use-in-a-workflow], [D:…/about-github-hosted-runners].

function labelsOf(runsOn) {
  return (Array.isArray(runsOn) ? runsOn : [runsOn]).map((l) => String(l).toLowerCase());
}

export class MachinePool {
  constructor(machines) {
    this.machines = machines ?? [];
    this.busy = new Set();
    this.waiting = [];
  }

  /** The machines whose labels include every `runs-on` label. */
  matching(runsOn) {
    const wanted = labelsOf(runsOn);
    return this.machines.filter((m) => wanted.every((l) => m.labels.map((y) => y.toLowerCase()).includes(l)));
  }

  /**
   * Wait for a machine for `runsOn` (`where` names the job in errors); resolves to
   * `{machine, release}`. A self-hosted machine is held until `release()`.
   */
  acquire(runsOn, where) {
    const candidates = this.matching(runsOn);
    if (!candidates.length) throw new Error(`${where}: no scenario machine has every label of runs-on ${JSON.stringify(runsOn)}`);
    return new Promise((resolve) => {
      const tryTake = () => {
        const free = candidates.find((m) => (m.environment ?? "github-hosted") !== "self-hosted" || !this.busy.has(m.name));
        if (!free) return false;
        const exclusive = (free.environment ?? "github-hosted") === "self-hosted";
        if (exclusive) this.busy.add(free.name);
        resolve({
          machine: free,
          release: () => {
            if (!exclusive) return;
            this.busy.delete(free.name);
            const waiting = this.waiting;
            this.waiting = [];
            for (const w of waiting) if (!w()) this.waiting.push(w);
          },
        });
        return true;
      };
      if (!tryTake()) this.waiting.push(tryTake);
    });
  }
}
