import { z } from "zod";

export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions"] as const;
export const PermissionMode = z.enum(PERMISSION_MODES);
export type PermissionMode = z.infer<typeof PermissionMode>;

export const HOOK_EVENTS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"] as const;
export const HookEvent = z.enum(HOOK_EVENTS);
export type HookEvent = z.infer<typeof HookEvent>;

export const HookConfig = z.strictObject({
  /** Tool names this hook applies to, as a regular expression (`shell|write_file`); all tools when absent. Tool events only. */
  matcher: z.string().optional(),
  /** Run with `sh -c` in the workspace; the event is JSON on stdin. */
  command: z.string().min(1),
  timeoutMs: z.number().int().positive().optional(),
});
export type HookConfig = z.infer<typeof HookConfig>;

/**
 * `<state-dir>/config.json`. Every key optional, unknown keys are errors.
 * Precedence: flags > environment > this file > defaults.
 */
export const ConfigFile = z.strictObject({
  model: z.string().min(1).optional(),
  baseUrl: z.url().optional(),
  /** Prefer OPENAI_API_KEY in the environment; a key here must stay in a 0600 file. */
  apiKey: z.string().min(1).optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
  maxTurns: z.number().int().positive().optional(),
  permissionMode: PermissionMode.optional(),
  permissions: z
    .strictObject({
      /** Rules like `read_file`, `shell(git status*)`, `write_file(src/**)`. */
      allow: z.array(z.string().min(1)).optional(),
      deny: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  hooks: z.partialRecord(HookEvent, z.array(HookConfig)).optional(),
  shell: z
    .strictObject({
      timeoutMs: z.number().int().positive().optional(),
      /** Extra patterns refused as destructive, on top of the built-in list. */
      deny: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  compaction: z
    .strictObject({
      /** Compact once the history passes this many characters. */
      thresholdChars: z.number().int().positive().optional(),
      /** Tool results longer than this are written to a file and replaced by a pointer. */
      largeToolResultChars: z.number().int().positive().optional(),
    })
    .optional(),
});
export type ConfigFile = z.infer<typeof ConfigFile>;
