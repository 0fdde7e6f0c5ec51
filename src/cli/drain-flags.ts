import { isLooserMode } from "../config/modes.ts";
import type { PermissionMode } from "../config/config.ts";
import { SANDBOX_MODES } from "../security/sandbox/modes.ts";
import type { RunFlags } from "../sessions/run-flags.ts";

// What `agent drain` takes from a session's recorded run flags. The record is
// sealed with the user's key, but a seal says who wrote it, not that this
// command line agreed: drain never runs looser than its own command line and
// the user's config from the record alone. A recorded widening is named, and
// needs its flag again on drain's line.

/** What drain would run with from its own command line and config. */
export interface DrainBaseline {
  permissionMode: PermissionMode;
  /** Absent: the default sandbox (workspace-write). */
  sandbox?: (typeof SANDBOX_MODES)[number];
  /** The allow rules config and drain's own line already give. */
  allow: readonly string[];
  /** The project is trusted without a flag (recorded consent, or the environment). */
  trusted: boolean;
}

export interface RecordedSplit {
  /** No looser than the baseline (deny rules, a stricter mode or sandbox, the added directories): drain runs with these. */
  taken: RunFlags;
  /** Looser than the baseline: not taken. */
  widening: RunFlags;
}

/** The record split into what narrows or repeats the baseline and what would widen it. */
export function splitRecordedFlags(recorded: RunFlags, baseline: DrainBaseline): RecordedSplit {
  const taken: RunFlags = {};
  const widening: RunFlags = {};
  if (recorded.permissionMode !== undefined) {
    if (isLooserMode(recorded.permissionMode, baseline.permissionMode)) widening.permissionMode = recorded.permissionMode;
    else taken.permissionMode = recorded.permissionMode;
  }
  if (recorded.sandbox !== undefined) {
    const rank = (mode: (typeof SANDBOX_MODES)[number]) => SANDBOX_MODES.indexOf(mode);
    if (rank(recorded.sandbox) > rank(baseline.sandbox ?? "workspace-write")) widening.sandbox = recorded.sandbox;
    else taken.sandbox = recorded.sandbox;
  }
  // Trust the project already has needs no flag; trust it lacks is a widening.
  if (recorded.trustProject && !baseline.trusted) widening.trustProject = true;
  const given = (recorded.allow ?? []).filter((rule) => baseline.allow.includes(rule));
  const added = (recorded.allow ?? []).filter((rule) => !baseline.allow.includes(rule));
  if (given.length > 0) taken.allow = given;
  if (added.length > 0) widening.allow = added;
  if (recorded.deny !== undefined) taken.deny = recorded.deny;
  if (recorded.addDirs !== undefined) taken.addDirs = recorded.addDirs;
  return { taken, widening };
}

/** The flags as they were typed, for the lines saying what was taken or left. */
export function describeFlags(flags: RunFlags): string {
  const permissions = permissionFlags(flags);
  const dirs = (flags.addDirs ?? []).map((dir) => `--add-dir ${dir}`);
  return [
    ...(permissions.length > 0 ? [`permissions: ${permissions.join(" ")}`] : []),
    ...(dirs.length > 0 ? [`directories: ${dirs.join(" ")}`] : []),
    ...(flags.leadMode !== undefined ? [`Lead: --lead-mode ${flags.leadMode}`] : []),
  ].join("; ");
}

/** The permission flags alone, as typed. */
export function permissionFlags(flags: RunFlags): string[] {
  return [
    ...(flags.permissionMode !== undefined ? [`--permission-mode ${flags.permissionMode}`] : []),
    ...(flags.allow ?? []).map((rule) => `--allow '${rule}'`),
    ...(flags.deny ?? []).map((rule) => `--deny '${rule}'`),
    ...(flags.sandbox !== undefined ? [`--sandbox ${flags.sandbox}`] : []),
    ...(flags.trustProject ? ["--trust-project"] : []),
  ];
}
