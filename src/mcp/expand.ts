import type { McpServerConfig } from "./config.ts";

/** A `${VAR}` a server's config needs that the environment does not have. */
export class MissingVariableError extends Error {
  constructor(
    readonly variable: string,
    readonly where: string,
  ) {
    super(`${where} uses \${${variable}}, which is not set; export ${variable} or write \${${variable}:-default}`);
  }
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `${VAR}` and `${VAR:-default}` in one value, from `env`; an empty variable counts as set. */
export function expandValue(value: string, env: Record<string, string | undefined>, where: string): string {
  return value.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined) return found;
    if (fallback !== undefined) return fallback;
    throw new MissingVariableError(name, where);
  });
}

function expandRecord(
  record: Record<string, string> | undefined,
  env: Record<string, string | undefined>,
  where: string,
): Record<string, string> | undefined {
  if (record === undefined) return undefined;
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, expandValue(value, env, `${where}.${key}`)]));
}

/**
 * The server's config with every `${VAR}` replaced. Done when the server
 * starts, not when the config is read: a variable missing for one server must
 * not stop a run that may never use it.
 */
export function expandServer(name: string, config: McpServerConfig, env: Record<string, string | undefined>): McpServerConfig {
  const at = `mcpServers.${name}`;
  if ("url" in config) {
    return { ...config, url: expandValue(config.url, env, `${at}.url`), headers: expandRecord(config.headers, env, `${at}.headers`) };
  }
  return {
    ...config,
    command: expandValue(config.command, env, `${at}.command`),
    args: config.args?.map((arg, i) => expandValue(arg, env, `${at}.args[${i}]`)),
    env: expandRecord(config.env, env, `${at}.env`),
    cwd: config.cwd === undefined ? undefined : expandValue(config.cwd, env, `${at}.cwd`),
  };
}
