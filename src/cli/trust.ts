import { defineCommand } from "citty";
import { resolveProjectTrust } from "../trust/project-trust.ts";
import { trustCoverage, trustCoverageLines, trustSummaryLines } from "../trust/summary.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { writeJson, writeOut } from "./output.ts";
import { resolveWorkspace } from "./run/workspace.ts";

export const trustCommand = defineCommand({
  meta: {
    name: "trust",
    description:
      "Show what the project's own config would enable (hooks, MCP servers, endpoint, allow rules, modes) and trust it until those settings change; --revoke takes it back",
  },
  args: {
    revoke: { type: "boolean", description: "Forget this project's trust: its settings are ignored again" },
    ...jsonArg,
    ...globalArgs,
  },
  async run({ args }) {
    const workspace = resolveWorkspace(args.workspace);
    // What the user agrees to is the project's settings themselves, never what the environment says.
    const trust = resolveProjectTrust({ workspace, env: { ...process.env, AGENT_TRUST_PROJECT: undefined } });
    const { items, hash } = trust.fingerprint;
    if (args.revoke) {
      const removed = trust.store.remove(trust.realPath);
      if (args.json) await writeJson({ workspace: trust.realPath, revoked: removed });
      else await writeOut(removed ? `${trust.realPath}: no longer trusted; its own hooks, MCP servers, endpoint and allow rules are ignored again\n` : `${trust.realPath} was not trusted\n`);
      return;
    }
    if (items.length > 0) trust.store.record(trust.realPath, { decision: "trusted", fingerprint: hash, at: new Date().toISOString() });
    if (args.json) {
      const { covered, uncovered } = trustCoverage(items, trust.realPath);
      await writeJson({ workspace: trust.realPath, trusted: items.length > 0, fingerprint: hash || null, trust_file: trust.store.path, settings: items, covers: covered, not_covered: uncovered });
      return;
    }
    if (items.length === 0) {
      await writeOut(`${trust.realPath}: the project's files set nothing that needs trust (no hooks, MCP servers, endpoint, allow rules or looser modes); nothing recorded\n`);
      return;
    }
    const lines = [
      `${trust.realPath} is now trusted. Its files enable:`,
      ...trustSummaryLines(items),
      ...trustCoverageLines(items, trust.realPath),
      `Recorded in ${trust.store.path}; when these settings or the files they run change, the project is untrusted again.`,
      "",
    ];
    await writeOut(lines.join("\n"));
  },
});
