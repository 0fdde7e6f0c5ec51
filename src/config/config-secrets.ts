import { SECRET_NAME_PATTERNS } from "../security/env-policy.ts";
import { registerSecret } from "../security/redact.ts";
import { storeUrlPasswords } from "../store/store-url.ts";
import type { LoadedConfigFile } from "./config-file.ts";
import { isSecretHeader } from "./redact.ts";

const SECRET_ENV_NAME = new RegExp(`^(?:${SECRET_NAME_PATTERNS.map((glob) => glob.replaceAll("*", ".*")).join("|")})$`, "i");

/** A header's credential without its scheme: `Bearer x` registers `x`. */
function credentialOf(value: string): string {
  return value.replace(/^(?:bearer|basic|token)\s+/i, "");
}

/**
 * Registers every credential written in any config file as a secret, whether
 * this run uses it or not: the `apiKey` of each level (OPENAI_API_KEY may win
 * over the local file's), credential headers of the model endpoint and of MCP
 * servers, MCP servers' secret-named `env` values, and a store URL's password.
 * From then on they are masked in what the model is sent (tool results, so
 * `cat .agent/config.local.json` shows none) and in everything written out,
 * and kept out of commands' environments. `${VAR}` placeholders are names, not
 * values: the variable's value is the environment's business.
 */
export function registerConfigSecrets(files: readonly LoadedConfigFile[]): void {
  const add = (value: string | undefined) => {
    if (value !== undefined && !value.includes("${")) registerSecret(value);
  };
  for (const { config } of files) {
    add(config.apiKey);
    for (const [name, value] of Object.entries(config.headers ?? {})) if (isSecretHeader(name)) add(credentialOf(value));
    for (const password of storeUrlPasswords(config.store ?? "")) add(password);
    for (const server of Object.values(config.mcpServers ?? {})) {
      if ("url" in server) {
        for (const [name, value] of Object.entries(server.headers ?? {})) if (isSecretHeader(name)) add(credentialOf(value));
      } else {
        for (const [name, value] of Object.entries(server.env ?? {})) if (SECRET_ENV_NAME.test(name)) add(value);
      }
    }
  }
}
