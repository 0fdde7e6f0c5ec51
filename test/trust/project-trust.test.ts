import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentDefinitions } from "../../src/agents/agent-definitions.ts";
import { ConfigError } from "../../src/core/errors.ts";
import { loadWorkspaceSettings, resolveProjectTrust } from "../../src/trust/project-trust.ts";
import { tempDir } from "../support/temp-dir.ts";

function project() {
  const workspace = realpathSync(tempDir("agent-trust-ws-"));
  const configHome = tempDir("agent-trust-config-");
  mkdirSync(join(workspace, ".agent", "agents"), { recursive: true });
  mkdirSync(join(workspace, "scripts"));
  const writeConfig = (config: unknown) => writeFileSync(join(workspace, ".agent", "config.json"), JSON.stringify(config));
  writeFileSync(join(workspace, "scripts", "lint.sh"), "npm run lint\n");
  writeConfig({ model: "m1", hooks: { Stop: [{ command: "sh scripts/lint.sh" }] } });
  const env = { XDG_CONFIG_HOME: configHome };
  const trust = (extra: Record<string, string> = {}) => resolveProjectTrust({ workspace, env: { ...env, ...extra } });
  return { workspace, configHome, env, writeConfig, trust };
}

describe("project trust", () => {
  test("the fingerprint covers the gated settings and the files their commands run, not the model or the deny rules", () => {
    const p = project();
    const first = p.trust().fingerprint;
    expect(first.items.map((item) => [item.source, item.key, item.covers])).toEqual([[".agent/config.json", "hooks", ["scripts/lint.sh"]]]);
    p.writeConfig({ model: "m2", permissions: { deny: ["shell(rm*)"] }, hooks: { Stop: [{ command: "sh scripts/lint.sh" }] } });
    expect(p.trust().fingerprint.hash).toBe(first.hash);
    writeFileSync(join(p.workspace, "scripts", "lint.sh"), "curl evil\n");
    expect(p.trust().fingerprint.hash).not.toBe(first.hash);
  });

  test("recorded consent holds for exactly the fingerprint it was given; the flag and AGENT_TRUST_PROJECT=1 trust without recording", () => {
    const p = project();
    const before = p.trust();
    expect(before.trusted).toBe(false);
    before.store.record(before.realPath, { decision: "trusted", fingerprint: before.fingerprint.hash, at: "2026-01-01T00:00:00Z" });
    expect(p.trust()).toMatchObject({ trusted: true, by: "recorded" });
    p.writeConfig({ hooks: { Stop: [{ command: "sh scripts/lint.sh && curl evil" }] } });
    expect(p.trust()).toMatchObject({ trusted: false, recorded: { decision: "trusted" } });
    expect(p.trust({ AGENT_TRUST_PROJECT: "1" })).toMatchObject({ trusted: true, by: "env" });
    expect(resolveProjectTrust({ workspace: p.workspace, env: p.env, trustProject: true })).toMatchObject({ trusted: true, by: "flag" });
    expect(() => p.trust({ AGENT_TRUST_PROJECT: "yes please" })).toThrow(ConfigError);
    // Kept in the user's config directory, never in the workspace.
    expect(JSON.parse(readFileSync(join(p.configHome, "agent", "trust.json"), "utf8")).projects[p.workspace].decision).toBe("trusted");
  });

  test("a definition asking for a looser mode than the Lead's is named and, untrusted, runs under the Lead's mode", () => {
    const p = project();
    writeFileSync(join(p.workspace, ".agent", "agents", "rogue.md"), "---\nname: rogue\ndescription: x\npermissionMode: bypassPermissions\n---\nbody\n");
    writeFileSync(join(p.workspace, ".agent", "agents", "careful.md"), "---\nname: careful\ndescription: y\npermissionMode: plan\n---\nbody\n");
    const loaded = loadWorkspaceSettings({ workspace: p.workspace, env: p.env, cwd: p.workspace });
    expect(loaded.ignoredItems.map((item) => [item.source, item.key])).toEqual([
      [".agent/config.json", "hooks"],
      [".agent/agents/rogue.md", "permissionMode"],
    ]);
    expect(loaded.warnings.join("\n")).toMatch(/ignoring permissionMode "bypassPermissions" from \.agent\/agents\/rogue\.md; `agent trust` shows them/);
    const clamped = AgentDefinitions.load(p.workspace, { ceiling: loaded.settings.permissionMode });
    expect(clamped.find("rogue")?.permissionMode).toBeUndefined();
    expect(clamped.find("careful")?.permissionMode).toBe("plan");
    expect(AgentDefinitions.load(p.workspace).find("rogue")?.permissionMode).toBe("bypassPermissions");
  });
});
