import { join } from "node:path";
import { defineCommand } from "citty";
import { AgentError, AgentRunError } from "../../core/errors.ts";
import { globalArgs, jsonArg } from "../args.ts";
import { formatTable, writeJson, writeOut } from "../output.ts";
import { runtimeArgs, trustProjectArg } from "../run/runtime-args.ts";
import { resolveWorkspace, runStateDir } from "../run/workspace.ts";
import { VERSION } from "../version.ts";
import {
  type Check,
  checkConfig,
  checkEndpoint,
  checkGit,
  checkMcp,
  checkPendingWork,
  checkSandbox,
  checkStateDir,
  checkWorkspace,
} from "./checks.ts";
import { checkCompletion, checkModelInfo, checkProfile } from "./model-checks.ts";
import { type StoreCheck, checkStore } from "./store-checks.ts";
import { storeArg } from "../store/store-arg.ts";

/** `agent doctor` found something `agent run` needs missing (exit 1). */
export class DoctorFailedError extends AgentRunError {
  override readonly code = "DOCTOR_FAILED";
}

const ENDPOINT_TIMEOUT_MS = 10_000;

export const doctorCommand = defineCommand({
  meta: { name: "doctor", description: "Check that everything `agent run` needs is in place, one line per check" },
  args: {
    model: { type: "string", valueHint: "name", description: "Check this model instead of the configured one" },
    "base-url": { type: "string", valueHint: "url", description: "Check this endpoint instead of the configured one" },
    provider: runtimeArgs.provider,
    profile: runtimeArgs.profile,
    sandbox: runtimeArgs.sandbox,
    offline: { type: "boolean", description: "Contact no endpoint and start no MCP server (the key is only checked for presence)" },
    ...trustProjectArg,
    ...storeArg,
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const checks: Check[] = [{ id: "version", status: "ok", detail: `agent ${VERSION} (${process.platform}-${process.arch})` }];
    let workspace: string | undefined;
    try {
      workspace = resolveWorkspace(args.workspace);
      checks.push(checkWorkspace(workspace));
    } catch (error) {
      checks.push({ id: "workspace", status: "fail", detail: (error as Error).message });
    }
    // Without a workspace the state dir is still known when given explicitly;
    // else it is taken as if the workspace were the current directory.
    let stateDir: string | undefined;
    try {
      stateDir = runStateDir(args, workspace ?? process.cwd());
      checks.push(checkStateDir(stateDir));
    } catch (error) {
      // A planted or redirected .agent/state: reported, never followed.
      if (!(error instanceof AgentError)) throw error;
      checks.push({ id: "state", status: "fail", detail: error.message });
    }
    const { checks: configChecks, settings } = checkConfig(workspace ?? process.cwd(), {
      model: args.model,
      baseUrl: args["base-url"],
      provider: args.provider,
      profile: args.profile,
      sandbox: args.sandbox,
      store: args.store,
    }, args["trust-project"] === true);
    checks.push(...configChecks);
    let store: StoreCheck | undefined;
    if (settings) {
      const endpoint = await checkEndpoint(settings, args.offline === true, ENDPOINT_TIMEOUT_MS);
      checks.push(...endpoint, checkProfile(settings), checkModelInfo(settings));
      checks.push(await checkCompletion(settings, endpoint, args.offline === true, ENDPOINT_TIMEOUT_MS));
      checks.push(...(await checkMcp(settings, workspace ?? process.cwd(), args.offline === true)));
      // A state dir that was refused: `.agent/` (read-only in the sandbox anyway) stands in for it.
      checks.push(checkSandbox(settings, workspace ?? process.cwd(), stateDir ?? join(workspace ?? process.cwd(), ".agent")));
      store = await checkStore(settings.store);
      checks.push(store.check);
    } else {
      checks.push({ id: "endpoint", status: "skip", detail: "not checked: the settings could not be read" });
    }
    checks.push(checkGit());
    try {
      // Pending work is where the runs keep it: the files, or the PostgreSQL store's rows.
      if (stateDir === undefined) checks.push({ id: "pending", status: "skip", detail: "not checked: the state root is refused" });
      else if (store?.leftovers === null) checks.push({ id: "pending", status: "skip", detail: "not checked: the store cannot be used" });
      else checks.push(...(await checkPendingWork(stateDir, store?.leftovers)));
    } finally {
      await store?.close();
    }

    const problems = checks.filter((c) => c.status === "fail");
    if (args.json) {
      await writeJson({ ok: problems.length === 0, version: VERSION, state_dir: stateDir ?? null, checks });
    } else {
      const rows = checks.map((c) => [c.status === "fail" ? "FAIL" : c.status, c.id.replace(/_/g, " "), c.detail]);
      await writeOut(formatTable(rows));
    }
    if (problems.length > 0) {
      const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
      throw new DoctorFailedError(`${count} (${problems.map((p) => p.id).join(", ")}): \`agent run\` would fail; fix what the failed checks say`);
    }
  },
});
