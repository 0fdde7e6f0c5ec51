import { readFileSync } from "node:fs";
import { ConfigError, UsageError } from "../core/errors.ts";
import { DEFAULT_MAX_CONTENT_BYTES } from "../core/message-format.ts";
import { FileMailboxStore } from "../mailbox/file-store.ts";
import type { MailboxStore } from "../mailbox/store.ts";
import type { StoreSelection } from "../store/store-url.ts";
import type { GlobalValues } from "./args.ts";
import { defaultWorkspace } from "../config/workspace-root.ts";

/** A session's mailbox for an admin command, and what releases it (a database's connections). */
export interface SessionMailbox {
  store: MailboxStore;
  /** Who holds the session's runtime lock in a PostgreSQL store (a Lead on any machine); absent for files. */
  sharedOwner?: () => Promise<{ pid: number; host: string } | undefined>;
  close(): Promise<void>;
}

export interface SessionMailboxOptions {
  /** Read the content cap from config too (commands that send or recover judge sizes as the runtime does). */
  configured?: boolean;
  env?: Record<string, string | undefined>;
}

/**
 * The mailbox of `session` in the store the command is pointed at: `--store`,
 * else AGENT_STORE, else config `store`, else the session's files. Config files
 * are parsed only when one mentions a key this needs, and the PostgreSQL modules
 * are loaded only for a PostgreSQL store: reading commands on files start as
 * fast as before.
 */
export async function openSessionMailbox(
  session: { dir: string; meta: { id: string } },
  args: GlobalValues & { store?: string },
  options: SessionMailboxOptions = {},
): Promise<SessionMailbox> {
  const env = options.env ?? process.env;
  const fromConfig = await configValues(args.workspace, options.configured === true || (args.store === undefined && !env.AGENT_STORE));
  const selection = await storeSelection(args.store, env.AGENT_STORE, fromConfig.store);
  const maxContentBytes = options.configured ? fromConfig.maxContentBytes : undefined;
  if (selection.kind === "files") {
    return { store: new FileMailboxStore({ stateDir: session.dir, ...(maxContentBytes === undefined ? {} : { maxContentBytes }) }), close: async () => {} };
  }
  const { openMailboxBackend } = await import("../app/mailbox-backend.ts");
  const backend = await openMailboxBackend(
    { store: selection, mailbox: { maxContentBytes: maxContentBytes ?? DEFAULT_MAX_CONTENT_BYTES } },
    { stateDir: session.dir, sessionId: session.meta.id },
  );
  return { store: backend.store, ...(backend.sharedOwner ? { sharedOwner: backend.sharedOwner } : {}), close: () => backend.close() };
}

/** The mailbox's content cap as the config files of the workspace set it: how far the CLI reads a message's content. */
export async function configuredContentCap(workspace: string | undefined): Promise<number> {
  return (await configValues(workspace, true)).maxContentBytes ?? DEFAULT_MAX_CONTENT_BYTES;
}

/** The store `--store`, AGENT_STORE or config `store` names, reading config files only when needed. */
export async function selectedStore(
  args: GlobalValues & { store?: string },
  env: Record<string, string | undefined> = process.env,
): Promise<StoreSelection> {
  const fromConfig = await configValues(args.workspace, args.store === undefined && !env.AGENT_STORE);
  return storeSelection(args.store, env.AGENT_STORE, fromConfig.store);
}

async function storeSelection(flag: string | undefined, env: string | undefined, config: { value: string; path: string } | undefined): Promise<StoreSelection> {
  const [value, source] =
    flag !== undefined ? [flag, "flag"] : env ? [env, "env"] : config ? [config.value, config.path] : [undefined, undefined];
  if (value === undefined) return { kind: "files" };
  const { displayStoreUrl, parseStoreUrl } = await import("../store/store-url.ts");
  const parsed = parseStoreUrl(value);
  if (!("problem" in parsed)) return parsed;
  const shown = JSON.stringify(displayStoreUrl(value));
  if (source === "flag") throw new UsageError(`invalid value ${shown} for --store: expected ${parsed.problem}`);
  if (source === "env") throw new ConfigError(`invalid AGENT_STORE=${shown} in the environment: expected ${parsed.problem}; fix or unset it`);
  throw new ConfigError(`config file ${source}: invalid value ${shown} for store: expected ${parsed.problem}; fix it or remove it`);
}

/** `store` and `mailbox.maxContentBytes` from the config files, the highest level that sets each winning. */
async function configValues(
  workspace: string | undefined,
  wanted: boolean,
): Promise<{ store?: { value: string; path: string }; maxContentBytes?: number }> {
  if (!wanted) return {};
  const { CONFIG_LEVELS, configLocations } = await import("../config/locations.ts");
  const locations = configLocations(workspace ?? defaultWorkspace(process.cwd()));
  const out: { store?: { value: string; path: string }; maxContentBytes?: number } = {};
  let readConfigFile: typeof import("../config/config-file.ts").readConfigFile | undefined;
  for (const level of CONFIG_LEVELS) {
    const path = locations[level];
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      continue; // absent or unreadable: readConfigFile would say so if it mattered
    }
    // Parsing (and its schema) only for a file that names what is needed here.
    if (!text.includes('"store"') && !text.includes('"mailbox"')) continue;
    readConfigFile ??= (await import("../config/config-file.ts")).readConfigFile;
    const config = readConfigFile(path, level)?.config;
    if (config?.store !== undefined) out.store = { value: config.store, path };
    if (config?.mailbox?.maxContentBytes !== undefined) out.maxContentBytes = config.mailbox.maxContentBytes;
  }
  return out;
}
