//! `actions/upload-artifact` (v7) run as the runner runs a node action: a process of its own with
//! its inputs in `INPUT_*`, `ACTIONS_RUNTIME_TOKEN` and `ACTIONS_RESULTS_URL`, outputs through
//! `$GITHUB_OUTPUT`. The action's `run()` (actions/upload-artifact@bbbca2d, v7.0.0 — the pinned
//! v7.0.1 changed no source: `src/upload/upload-artifact.ts`, `src/upload/input-helper.ts`,
//! `src/shared/search.ts`, `src/shared/upload-artifact.ts`) in our words, over GitHub's own
//! packages: `@actions/glob` finds the files, `@actions/artifact` zips (or not) and uploads through
//! the artifact service (CreateArtifact, the signed blob URL, FinalizeArtifact).
import path from "node:path";
import fs from "node:fs";
import * as core from "@actions/core";
import * as glob from "@actions/glob";
import artifact, { ArtifactNotFoundError } from "@actions/artifact";

/** `findFilesToUpload`: the files a path (or glob) names, and the artifact's root directory. */
async function search(searchPath, includeHidden) {
  const globber = await glob.create(searchPath, {
    followSymbolicLinks: true,
    implicitDescendants: true,
    omitBrokenSymbolicLinks: true,
    excludeHiddenFiles: !includeHidden,
  });
  const files = [];
  for (const found of await globber.glob()) {
    if (!fs.statSync(found).isDirectory()) files.push(found);
  }
  const roots = globber.getSearchPaths();
  if (roots.length > 1) {
    // The least common ancestor of the search paths.
    const split = roots.map((r) => path.normalize(r).split(path.sep));
    const common = [];
    for (let i = 0; i < Math.min(...split.map((s) => s.length)); i++) {
      if (split.some((s) => s[i] !== split[0][i])) break;
      common.push(split[0][i]);
    }
    return { files, root: path.join(roots[0].startsWith(path.sep) ? path.sep : "", ...common) };
  }
  // A single file named without a directory or pattern: its parent is the root.
  if (files.length === 1 && roots[0] === files[0]) return { files, root: path.dirname(files[0]) };
  return { files, root: roots[0] };
}

async function run() {
  const name = core.getInput("name");
  const searchPath = core.getInput("path", { required: true });
  const overwrite = core.getBooleanInput("overwrite");
  const includeHidden = core.getBooleanInput("include-hidden-files");
  const archive = core.getBooleanInput("archive");
  const ifNoFilesFound = core.getInput("if-no-files-found");
  if (!["warn", "error", "ignore"].includes(ifNoFilesFound)) {
    core.setFailed(`Unrecognized if-no-files-found input. Provided: ${ifNoFilesFound}. Available options: warn,error,ignore`);
  }
  const options = {};
  const retention = core.getInput("retention-days");
  if (retention) {
    options.retentionDays = parseInt(retention);
    if (isNaN(options.retentionDays)) core.setFailed("Invalid retention-days");
  }
  const level = core.getInput("compression-level");
  if (level) {
    options.compressionLevel = parseInt(level);
    if (isNaN(options.compressionLevel) || options.compressionLevel < 0 || options.compressionLevel > 9) {
      core.setFailed("Invalid compression-level. Valid values are 0-9");
    }
  }
  const { files, root } = await search(searchPath, includeHidden);
  if (files.length === 0) {
    const message = `No files were found with the provided path: ${searchPath}. No artifacts will be uploaded.`;
    if (ifNoFilesFound === "error") core.setFailed(message);
    else if (ifNoFilesFound === "warn") core.warning(message);
    else core.info(message);
    return;
  }
  if (!archive && files.length > 1) {
    core.setFailed(`When 'archive' is set to false, only a single file can be uploaded. Found ${files.length} files to upload.`);
    return;
  }
  if (overwrite) {
    // Best effort: what ListArtifacts does not list (a reservation) is not deleted.
    try {
      await artifact.deleteArtifact(name);
    } catch (e) {
      if (!(e instanceof ArtifactNotFoundError)) core.debug(`Unable to delete artifact: ${e.message}`);
    }
  }
  if (!archive) options.skipArchive = true;
  const uploaded = await artifact.uploadArtifact(name, files, root, options);
  core.info(`Artifact ${name} has been successfully uploaded! Final size is ${uploaded.size} bytes. Artifact ID is ${uploaded.id}`);
  core.setOutput("artifact-id", uploaded.id);
  core.setOutput("artifact-digest", uploaded.digest);
  const [owner, repo] = process.env.GITHUB_REPOSITORY.split("/");
  core.setOutput("artifact-url", `${process.env.GITHUB_SERVER_URL}/${owner}/${repo}/actions/runs/${process.env.GITHUB_RUN_ID}/artifacts/${uploaded.id}`);
}

run().catch((e) => core.setFailed(e.message));
