//! Remote composite actions (`owner/repo[/path]@<40-hex sha>`) from the scenario's action
//! repositories: a `uses:` naming one of them runs the action as the runner would after
//! downloading the repository at that commit (`git archive` of the commit into a per-scenario
//! cache; `GITHUB_ACTION_PATH` is the action's directory there). A commit that is not in the
//! repository stops the scenario, as GitHub fails the job when it cannot resolve the action.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const REMOTE = /^([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)((?:\/[A-Za-z0-9_.-]+)*)@([0-9a-f]{40})$/;

/**
 * The local directory of a remote action `uses` when its repository is one of `repos`
 * (`{"owner/repo": gitDir}`), checked out under `cacheDir`; null when `uses` names another
 * repository. Throws when the commit or the action's directory does not exist.
 */
export function remoteActionDir(uses, repos, cacheDir) {
  const m = REMOTE.exec(uses);
  if (!m || !repos || !(m[1] in repos)) return null;
  const [, repo, sub, sha] = m;
  const root = path.join(cacheDir, repo, sha);
  if (!fs.existsSync(root)) {
    const tmp = `${root}.partial`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    try {
      const tar = execFileSync("git", ["-C", repos[repo], "archive", "--format=tar", sha], { maxBuffer: 1 << 30 });
      execFileSync("tar", ["-x", "-C", tmp], { input: tar });
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw new Error(`uses: ${uses}: commit ${sha} is not in ${repo} (${String(e.stderr ?? e.message).trim()})`);
    }
    fs.renameSync(tmp, root);
  }
  const dir = path.join(root, sub);
  if (!fs.existsSync(path.join(dir, "action.yml")) && !fs.existsSync(path.join(dir, "action.yaml"))) {
    throw new Error(`uses: ${uses}: no action.yml in ${repo}${sub} at ${sha}`);
  }
  return dir;
}
