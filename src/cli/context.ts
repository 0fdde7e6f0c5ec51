import { isAbsolute, join, resolve } from "node:path";
import { readConfigFile } from "../config/config-file.ts";
import { CONFIG_LEVELS, configLocations } from "../config/locations.ts";
import { UsageError } from "../core/errors.ts";
import { FileMailboxStore } from "../mailbox/file-store.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import type { GlobalValues } from "./args.ts";

/** `--state-dir`, else `$AGENT_STATE_DIR`, else `<cwd>/.agent`; always absolute. */
export function resolveStateDir(
  globals: GlobalValues,
  env: Record<string, string | undefined> = process.env,
  cwd: string = process.cwd(),
): string {
  const flag = globals["state-dir"];
  if (flag !== undefined) {
    if (flag.length === 0) throw new UsageError("--state-dir needs a directory path, e.g. --state-dir ./.agent");
    return isAbsolute(flag) ? flag : resolve(cwd, flag);
  }
  const fromEnv = env.AGENT_STATE_DIR;
  if (fromEnv !== undefined && fromEnv.length > 0) return resolve(cwd, fromEnv);
  return join(cwd, ".agent");
}

/**
 * The one place the CLI builds its mailbox store, with the content cap the config
 * files of this workspace set (a claim or recover by the CLI must judge sizes as
 * the runtime does).
 */
export function openMailboxStore(stateDir: string, workspace: string = process.cwd()): MailboxStore {
  const locations = configLocations(workspace);
  let maxContentBytes: number | undefined;
  // Highest precedence last: the last level that sets it wins.
  for (const level of CONFIG_LEVELS) {
    maxContentBytes = readConfigFile(locations[level], level)?.config.mailbox?.maxContentBytes ?? maxContentBytes;
  }
  return new FileMailboxStore({ stateDir, ...(maxContentBytes === undefined ? {} : { maxContentBytes }) });
}
