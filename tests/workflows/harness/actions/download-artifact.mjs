//! `actions/download-artifact` (v8) run as the runner runs a node action (see upload-artifact.mjs):
//! the action's `run()` (actions/download-artifact@484a0b5, v8.0.1: `src/download-artifact.ts`) in
//! our words, over `@actions/artifact`: from the current run through the artifact service unless
//! `github-token` is given (then the REST API, for `repository` and `run-id`); by `name`, by
//! `artifact-ids`, or every artifact matching `pattern`; each download's SHA-256 checked against
//! the listed digest (`digest-mismatch`, default error); one artifact into `path` itself, several
//! into `path/<name>` unless `merge-multiple`.
import os from "node:os";
import path from "node:path";
import * as core from "@actions/core";
import artifactClient from "@actions/artifact";
import { Minimatch } from "minimatch";

async function run() {
  const inputs = {
    name: core.getInput("name"),
    path: core.getInput("path"),
    token: core.getInput("github-token"),
    repository: core.getInput("repository"),
    runID: parseInt(core.getInput("run-id")),
    pattern: core.getInput("pattern"),
    mergeMultiple: core.getBooleanInput("merge-multiple"),
    artifactIds: core.getInput("artifact-ids"),
    skipDecompress: core.getBooleanInput("skip-decompress"),
    digestMismatch: core.getInput("digest-mismatch") || "error",
  };
  if (!["ignore", "info", "warn", "error"].includes(inputs.digestMismatch)) {
    throw new Error(`Invalid value for 'digest-mismatch': '${inputs.digestMismatch}'. Valid options are: ignore, info, warn, error`);
  }
  if (!inputs.path) inputs.path = process.env.GITHUB_WORKSPACE || process.cwd();
  if (inputs.path.startsWith("~")) inputs.path = inputs.path.replace("~", os.homedir());
  if (inputs.name && inputs.artifactIds) {
    throw new Error(`Inputs 'name' and 'artifact-ids' cannot be used together. Please specify only one.`);
  }
  const resolved = path.resolve(inputs.path);
  const options = {};
  if (inputs.token) {
    // Another run (or repository) only with a token: through the REST API.
    const [repositoryOwner, repositoryName] = inputs.repository.split("/");
    if (!repositoryOwner || !repositoryName) throw new Error(`Invalid repository: '${inputs.repository}'. Must be in format owner/repo`);
    options.findBy = { token: inputs.token, workflowRunId: inputs.runID, repositoryName, repositoryOwner };
  }
  let artifacts;
  if (inputs.name) {
    const { artifact } = await artifactClient.getArtifact(inputs.name, options);
    if (!artifact) throw new Error(`Artifact '${inputs.name}' not found`);
    artifacts = [artifact];
  } else if (inputs.artifactIds) {
    const listed = inputs.artifactIds.split(",").map((s) => s.trim()).filter((s) => s !== "");
    if (listed.length === 0) throw new Error(`No valid artifact IDs provided in 'artifact-ids' input`);
    const ids = listed.map((s) => {
      const n = parseInt(s, 10);
      if (isNaN(n)) throw new Error(`Invalid artifact ID: '${s}'. Must be a number.`);
      return n;
    });
    const { artifacts: all } = await artifactClient.listArtifacts({ latest: true, ...options });
    artifacts = all.filter((a) => ids.includes(a.id));
    if (artifacts.length === 0) throw new Error(`None of the provided artifact IDs were found`);
    if (artifacts.length < ids.length) {
      const found = artifacts.map((a) => a.id);
      core.warning(`Could not find the following artifact IDs: ${ids.filter((i) => !found.includes(i)).join(", ")}`);
    }
  } else {
    const { artifacts: all } = await artifactClient.listArtifacts({ latest: true, ...options });
    artifacts = all;
    if (inputs.pattern) {
      const matcher = new Minimatch(inputs.pattern);
      artifacts = artifacts.filter((a) => matcher.match(a.name));
    }
  }
  for (const a of artifacts) {
    core.info(`- ${a.name} (ID: ${a.id}, Size: ${a.size}, Expected Digest: ${a.digest})`);
  }
  const single = Boolean(inputs.name) || inputs.mergeMultiple || artifacts.length === 1;
  const mismatches = [];
  for (const a of artifacts) {
    const { digestMismatch } = await artifactClient.downloadArtifact(a.id, {
      ...options,
      path: single ? resolved : path.join(resolved, a.name),
      expectedHash: a.digest,
      skipDecompress: inputs.skipDecompress,
    });
    if (digestMismatch) {
      mismatches.push(a.name);
      const message = `Artifact '${a.name}' digest validation failed. Please verify the integrity of the artifact.`;
      if (inputs.digestMismatch === "warn") core.warning(message);
      else if (inputs.digestMismatch === "info") core.info(message);
    }
  }
  if (mismatches.length > 0 && inputs.digestMismatch === "error") {
    throw new Error(`Digest validation failed for artifact(s): ${mismatches.join(", ")}. Use 'digest-mismatch: warn' to continue on mismatch.`);
  }
  core.info(`Total of ${artifacts.length} artifact(s) downloaded`);
  core.setOutput("download-path", resolved);
  core.info("Download artifact has finished successfully");
}

run().catch((e) => core.setFailed(`Unable to download artifact(s): ${e.message}`));
