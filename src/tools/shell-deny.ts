import { ConfigError } from "../core/errors.ts";

/** Where a command word can start: the beginning, after a separator or a pipe, in `$(…)`/backticks, after sudo. */
const AT_COMMAND = String.raw`(?:^|[;&|(\x60]\s*|\bsudo\s+(?:-\S+\s+)*)`;
/** One more argument of the same command (no separator or pipe inside). */
const ARG = String.raw`[^\s;&|()]+\s+`;
/** A target that means "everything": `/`, `/*`, `~`, `~/`, `~/*`, `$HOME`… */
const EVERYTHING = String.raw`(?:/\*?|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?\*?)(?=$|[\s;&|)])`;

/**
 * Commands refused before they run, whatever the permission mode: they destroy
 * data or the machine and no task of a coding agent needs them. This is a guard
 * against slips, not a sandbox; a determined command can always be written another way.
 */
export const BUILTIN_SHELL_DENY: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  {
    pattern: new RegExp(String.raw`${AT_COMMAND}rm\s+(?:${ARG})*?(?:-\w*[rR]\w*|--recursive)\s+(?:${ARG})*?${EVERYTHING}`),
    why: "recursively removes the root or the home directory",
  },
  { pattern: new RegExp(String.raw`${AT_COMMAND}rm\s(?:${ARG})*?--no-preserve-root\b`), why: "removes the root directory" },
  { pattern: new RegExp(String.raw`${AT_COMMAND}mkfs(?:\.\w+)?\b`), why: "formats a file system" },
  { pattern: new RegExp(String.raw`${AT_COMMAND}dd\b.*\bof=/dev/`), why: "writes raw bytes to a device" },
  { pattern: />\s*\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)\w*/, why: "overwrites a disk device" },
  {
    pattern: new RegExp(String.raw`${AT_COMMAND}(?:systemctl\s+)?(?:shutdown|reboot|halt|poweroff|init\s+[06])\b`),
    why: "shuts down or reboots the machine",
  },
  { pattern: /(\w+|:)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}/, why: "is a fork bomb" },
  {
    pattern: new RegExp(String.raw`${AT_COMMAND}(?:chmod|chown|chgrp)\s+(?:${ARG})*?-\w*R\w*\s+(?:${ARG})*?/(?=$|[\s;&|)])`),
    why: "changes the permissions or owner of every file on the machine",
  },
  {
    pattern: /\bgit\s+push\b(?=[^;&|]*(?:\s--force\b|\s--force-with-lease\b|\s-\w*f\b|\s\+))(?=[^;&|]*\b(?:main|master)\b)/,
    why: "force-pushes to main/master, rewriting shared history",
  },
];

export interface ShellDenial {
  pattern: string;
  why: string;
}

/** Compiles the config's `shell.deny` patterns (regular expressions searched anywhere in the command). */
export function compileShellDeny(patterns: readonly string[] = []): Array<{ pattern: RegExp; why: string }> {
  const extra = patterns.map((source) => {
    try {
      return { pattern: new RegExp(source), why: "matches a shell.deny pattern in config.json" };
    } catch (error) {
      throw new ConfigError(
        `invalid shell.deny pattern ${JSON.stringify(source)} in config.json: ${(error as Error).message}; use a JavaScript regular expression`,
      );
    }
  });
  return [...BUILTIN_SHELL_DENY, ...extra];
}

export function findShellDenial(command: string, deny: ReadonlyArray<{ pattern: RegExp; why: string }>): ShellDenial | undefined {
  const hit = deny.find(({ pattern }) => pattern.test(command));
  return hit ? { pattern: hit.pattern.source, why: hit.why } : undefined;
}
