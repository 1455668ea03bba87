import { MosaicError } from "../errors.ts";
import { hasControlChar, isNormalAbsolute, isWithin, MAX_SOCKET_PATH_BYTES, socketPathFits } from "../paths.ts";
import { runSockets } from "../runner/run-paths.ts";
import { HARNESSES, type HostFacts, type SandboxSpec } from "./types.ts";

/**
 * Refuses a spec the sandbox cannot confine as intended. Throws the first problem found,
 * as a MosaicError naming the field; binds() and bwrapArgv() never see a bad spec.
 */
export function validateSpec(spec: SandboxSpec, facts: HostFacts): void {
  checkFields(spec);
  const paths = specPaths(spec);
  for (const [field, p] of paths) {
    if (p === undefined) continue;
    checkPath(field, p);
  }
  checkNodes(facts);
  checkPackages(spec);
  checkRunnerBound(spec);
  checkNotUnderTmp(paths);
  checkSocketPaths(spec);
  checkNesting(spec);
  checkHome(spec, facts);
}

/** A known harness, both socket paths given, and mayLaunch a boolean. */
function checkFields(spec: SandboxSpec): void {
  if (!(HARNESSES as readonly string[]).includes(spec.harness)) {
    throw new MosaicError(
      "unknown-harness",
      "harness",
      `${JSON.stringify(spec.harness)} is not a harness; expected one of ${HARNESSES.join(", ")}`,
    );
  }
  for (const field of ["brokerSocket", "launchSocket"] as const) {
    if (spec[field] === undefined || spec[field] === "") {
      throw new MosaicError(
        "missing-field",
        field,
        `the ${field === "brokerSocket" ? "broker" : "launch"} socket path is required`,
      );
    }
  }
  if (typeof spec.mayLaunch !== "boolean") {
    throw new MosaicError("missing-field", "mayLaunch", "mayLaunch must be true or false");
  }
}

/** Every path of the spec, with the field that names it. */
function specPaths(spec: SandboxSpec): Array<[string, string | undefined]> {
  return [
    ["repo", spec.repo],
    ["runner", spec.runner],
    ["adapter", spec.adapter],
    ["brokerSocket", spec.brokerSocket],
    ["launchSocket", spec.launchSocket],
    ["workspace", spec.workspace],
    ["runDir", spec.runDir],
    ...spec.runnerFiles.map((f, i): [string, string] => [`runnerFiles[${i}]`, f]),
    ...(spec.packages ?? []).map((f, i): [string, string] => [`packages[${i}]`, f]),
  ];
}

/** node and the runner's node outside /tmp, which the session's private /tmp covers. */
function checkNodes(facts: HostFacts): void {
  if (isWithin(facts.node.path, "/tmp")) {
    throw new MosaicError(
      "under-tmp",
      "hostFacts.node",
      `node at ${facts.node.path} lies under /tmp, which the session's private /tmp covers; install node outside /tmp`,
    );
  }
  if (isWithin(facts.runnerNode, "/tmp")) {
    throw new MosaicError(
      "under-tmp",
      "hostFacts.runnerNode",
      `the runner's node at ${facts.runnerNode} lies under /tmp, which the session's private /tmp covers; set MOSAIC_STATE_DIR outside /tmp`,
    );
  }
}

/** Each package a directory under the repository's node_modules. */
function checkPackages(spec: SandboxSpec): void {
  for (const [i, p] of (spec.packages ?? []).entries()) {
    if (!isWithin(p, `${spec.repo}/node_modules`))
      throw new MosaicError(
        "package-outside",
        `packages[${i}]`,
        `${p} is not a package directory under ${spec.repo}/node_modules`,
      );
  }
}

/** The runner is one of the files bound. */
function checkRunnerBound(spec: SandboxSpec): void {
  if (!spec.runnerFiles.includes(spec.runner)) {
    throw new MosaicError(
      "runner-not-bound",
      "runner",
      `${spec.runner} is not one of runnerFiles, so the sandbox would not contain it`,
    );
  }
}

/** A path under /tmp is hidden by the private /tmp, which is bound last. */
function checkNotUnderTmp(paths: Array<[string, string | undefined]>): void {
  for (const [field, p] of paths) {
    if (p !== undefined && isWithin(p, "/tmp")) {
      throw new MosaicError(
        "under-tmp",
        field,
        `${p} lies under /tmp, which the session's private /tmp covers; use a path outside /tmp such as /var/tmp or a data root`,
      );
    }
  }
}

/**
 * A socket path past the kernel's limit is cut short by the bind: the host would listen on a name
 * no one asked for, and a session would find nothing at the one it was told.
 */
function checkSocketPaths(spec: SandboxSpec): void {
  const sockets: Array<[string, string]> = [
    ["brokerSocket", spec.brokerSocket],
    ["launchSocket", spec.launchSocket],
    ["runDir", runSockets(spec.runDir).tools],
    ["runDir", runSockets(spec.runDir).model],
  ];
  for (const [field, p] of sockets) {
    if (!socketPathFits(p)) {
      throw new MosaicError(
        "socket-path-too-long",
        field,
        `${p} is ${new TextEncoder().encode(p).length} bytes; a Unix socket path holds ${MAX_SOCKET_PATH_BYTES}: use a shorter ${field === "runDir" ? "data root" : "socket path"}`,
      );
    }
  }
}

/** Neither the workspace nor the run directory inside the other. */
function checkNesting(spec: SandboxSpec): void {
  if (isWithin(spec.workspace, spec.runDir)) {
    throw new MosaicError(
      "workspace-in-run",
      "workspace",
      `${spec.workspace} lies inside the run directory ${spec.runDir}`,
    );
  }
  if (isWithin(spec.runDir, spec.workspace)) {
    throw new MosaicError(
      "run-in-workspace",
      "runDir",
      `${spec.runDir} lies inside the workspace ${spec.workspace}, so the harness could rewrite its own bundle`,
    );
  }
}

/** A workspace or run directory that holds HOME would bind the founder's files read-write. */
function checkHome(spec: SandboxSpec, facts: HostFacts): void {
  for (const [field, p] of [
    ["workspace", spec.workspace],
    ["runDir", spec.runDir],
  ] as const) {
    if (isWithin(facts.home, p)) {
      // safety: ws-contains-home
      throw new MosaicError(
        "contains-home",
        field,
        `${p} contains the host HOME ${facts.home}; a session would see its secrets`,
      );
    }
  }
}

function checkPath(field: string, p: string): void {
  if (typeof p !== "string") {
    throw new MosaicError("not-a-path", field, `expected a path string, got ${typeof p}`);
  }
  if (hasControlChar(p)) {
    throw new MosaicError("control-char", field, `${JSON.stringify(p)} contains a newline, carriage return or NUL`);
  }
  if (!isNormalAbsolute(p)) {
    throw new MosaicError(
      "not-normal-absolute",
      field,
      `${JSON.stringify(p)} must be absolute and normalised (no "..", ".", "//" or trailing "/")`,
    );
  }
}
