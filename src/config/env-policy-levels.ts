import { DEFAULT_ENV_POLICY, type EnvPolicy, loosens, stricterInherit } from "../security/env-policy.ts";
import type { LoadedConfigFile } from "./config-file.ts";

/**
 * Config `shell.env` across the levels. The user's file sets the policy; the
 * project's and the local file may only narrow it (a stricter `inherit`, more
 * `exclude`, an `include_only` of their own): a checkout must not hand its
 * commands variables the user kept back, nor plant `LD_PRELOAD` through `set`.
 * What a narrowing level tries beyond that is named in `warnings` and ignored.
 */
export function mergeEnvPolicy(files: readonly LoadedConfigFile[], warnings: string[]): EnvPolicy {
  const policy: EnvPolicy = { ...DEFAULT_ENV_POLICY, exclude: [], includeOnly: [], set: {} };
  for (const file of files) {
    const env = file.config.shell?.env;
    if (env === undefined) continue;
    const narrowOnly = file.level !== "user";
    if (env.inherit !== undefined) {
      if (narrowOnly && loosens(policy.inherit, env.inherit)) {
        warnings.push(`${file.path}: shell.env.inherit ${JSON.stringify(env.inherit)} ignored: this file may only narrow the environment of commands (it is ${JSON.stringify(policy.inherit)}); set it in the user config`);
      } else {
        policy.inherit = narrowOnly ? stricterInherit(policy.inherit, env.inherit) : env.inherit;
      }
    }
    policy.exclude.push(...(env.exclude ?? []));
    if (env.include_only !== undefined) policy.includeOnly.push(env.include_only);
    if (env.set !== undefined && Object.keys(env.set).length > 0) {
      if (narrowOnly) {
        warnings.push(`${file.path}: shell.env.set ignored: only the user config may set variables for commands; move it there`);
      } else {
        Object.assign(policy.set, env.set);
      }
    }
  }
  return policy;
}
