import { rmSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { LEAD_MODES, PERMISSION_MODES } from "../config/modes.ts";
import { SANDBOX_MODES } from "../security/sandbox/modes.ts";
import { writeFileAtomic, writeFileAtomicOffLoop } from "../storage/atomic-file.ts";
import { readStateFile } from "../storage/state-file.ts";
import type { SessionMarker } from "./session-marker.ts";
import { lazySchema } from "../core/lazy-schema.ts";

/** `<session>/run-flags.json`: what the command line of the session's last run said about permissions, added directories and the Lead's mode. */
export const RUN_FLAGS_FILE = "run-flags.json";

/**
 * The permission flags a run's command line gave — not the merged settings: the
 * config levels are read again by whoever reads these, so drain sees what a
 * rerun of the same command line would.
 */
export const RunFlags = lazySchema(() =>
  z.strictObject({
    permissionMode: z.enum(PERMISSION_MODES).optional(),
    allow: z.array(z.string()).optional(),
    deny: z.array(z.string()).optional(),
    sandbox: z.enum(SANDBOX_MODES).optional(),
    trustProject: z.literal(true).optional(),
    /** `--add-dir` directories, real and absolute: drain takes them whatever its own permission flags (drain-action.ts). */
    addDirs: z.array(z.string()).optional(),
    /** `--lead-mode`: drain keeps it unless its own command line gives one (a delegate Lead stays one). */
    leadMode: z.enum(LEAD_MODES).optional(),
  }),
);
export type RunFlags = z.infer<typeof RunFlags>;

const RunFlagsFile = lazySchema(() =>
  z.strictObject({
    version: z.literal(1),
    flags: RunFlags,
    /** This user's seal over the session id and the flags (session-marker.ts). */
    seal: z.string(),
  }),
);

/** True when the command line gave none of the permission flags. */
export function noRunFlags(flags: RunFlags): boolean {
  return Object.values(flags).every((value) => value === undefined);
}

/**
 * Records a run's permission flags in its session, sealed with the user's
 * marker key: the file sits in the workspace, and a copy edited by someone else
 * (a session committed, changed and pulled back) must not raise what a later
 * `agent drain` may do.
 */
export function writeRunFlags(dir: string, sessionId: string, flags: RunFlags, marker: SessionMarker): void {
  writeFileAtomic(join(dir, RUN_FLAGS_FILE), runFlagsText(sessionId, flags, marker));
}

/** writeRunFlags with its fsyncs off the event loop: durable once the promise settles. */
export async function writeRunFlagsOffLoop(dir: string, sessionId: string, flags: RunFlags, marker: SessionMarker): Promise<void> {
  return writeFileAtomicOffLoop(join(dir, RUN_FLAGS_FILE), runFlagsText(sessionId, flags, marker));
}

/** Removes a session's recorded flags (a new session's, written while its runtime failed to build). */
export function removeRunFlags(dir: string): void {
  rmSync(join(dir, RUN_FLAGS_FILE), { force: true });
}

function runFlagsText(sessionId: string, flags: RunFlags, marker: SessionMarker): string {
  const clean = plainRunFlags(flags) ?? RunFlags.parse(flags);
  return `${JSON.stringify({ version: 1, flags: clean, seal: marker.sign(sealInput(sessionId, clean)) }, null, 2)}\n`;
}

/** The recorded flags when they carry this user's seal; undefined when none were recorded or the seal is wrong. */
export function readRunFlags(dir: string, sessionId: string, marker: SessionMarker): RunFlags | undefined {
  const file = readStateFile(join(dir, RUN_FLAGS_FILE), RunFlagsFile);
  if (file === undefined) return undefined;
  return marker.owns({ id: sealInput(sessionId, file.flags), marker: file.seal }) ? file.flags : undefined;
}

/** RunFlags' keys in its shape's order: the seal is over the flags' JSON, which a read (through the schema) gives in this order. */
const RUN_FLAG_KEYS = ["permissionMode", "allow", "deny", "sandbox", "trustProject", "addDirs", "leadMode"] as const;

const strings = (value: unknown): boolean => Array.isArray(value) && value.every((item) => typeof item === "string");
const oneOf = (values: readonly string[]) => (value: unknown) => typeof value === "string" && values.includes(value);
const RUN_FLAG_CHECKS: Record<(typeof RUN_FLAG_KEYS)[number], (value: unknown) => boolean> = {
  permissionMode: oneOf(PERMISSION_MODES),
  allow: strings,
  deny: strings,
  sandbox: oneOf(SANDBOX_MODES),
  trustProject: (value) => value === true,
  addDirs: strings,
  leadMode: oneOf(LEAD_MODES),
};

/**
 * `RunFlags.parse(flags)` as the schema returns it (defined keys in the shape's
 * order, arrays copied) when every key is one of its own with a good value, or
 * undefined for the schema to take (and refuse) the rest. A run writes its flags
 * before its first model request, and building the schema was ~2 ms of that.
 * test/sessions/run-flags.test.ts holds the two to the same answers.
 */
export function plainRunFlags(flags: Record<string, unknown>): RunFlags | undefined {
  if (typeof flags !== "object" || flags === null || Array.isArray(flags)) return undefined;
  for (const key of Object.keys(flags)) if (!Object.hasOwn(RUN_FLAG_CHECKS, key)) return undefined;
  const clean: Record<string, unknown> = {};
  for (const key of RUN_FLAG_KEYS) {
    const value = flags[key];
    if (value === undefined) continue;
    if (!RUN_FLAG_CHECKS[key](value)) return undefined;
    clean[key] = Array.isArray(value) ? [...value] : value;
  }
  return clean as RunFlags;
}

// A colon never occurs in a session id, so no seal over flags is also a session's marker.
function sealInput(sessionId: string, flags: RunFlags): string {
  return `run-flags:${sessionId}:${JSON.stringify(flags)}`;
}
