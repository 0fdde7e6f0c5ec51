import { describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { Tool, ToolContext } from "../../src/core/tool.ts";
import { type PermissionAsker, PermissionPolicy, type RuledTool } from "../../src/permissions/policy.ts";
import { editFileTool } from "../../src/tools/edit-file.ts";
import { readFileTool } from "../../src/tools/read-file.ts";
import { shellTool } from "../../src/tools/shell.ts";
import { writeFileTool } from "../../src/tools/write-file.ts";
import { tempDir } from "../support/temp-dir.ts";
import { RULE_TABLE, type RuleCall, type RuleCase } from "./rule-table.ts";

// The rule table (rule-table.ts) row by row through the real policy and the
// real tools' subjects. A person is there to ask (the asker records it and
// says no), so "ask" and "deny" are told apart; headless, an ask is a denial.

/** A fresh workspace for each row (removed after it), with the directories rows copy into. */
function workspaceOf(): string {
  const workspace = realpathSync(tempDir("agent-rule-table-"));
  mkdirSync(join(workspace, "dir"));
  mkdirSync(join(workspace, "sub"));
  return workspace;
}

const tools: Record<string, Tool> = {
  shell: shellTool() as Tool,
  write_file: writeFileTool() as Tool,
  edit_file: editFileTool() as Tool,
  read_file: readFileTool() as Tool,
};

/** The tool and its input for a row's call. An MCP tool is ruled by name, effect and arguments, as the Lead rules a teammate's. */
function callOf(call: RuleCall): [RuledTool, unknown] {
  if (typeof call === "string") return [tools.shell as Tool, { command: call }];
  if ("tool" in call) {
    const input = call.tool === "write_file" ? { path: call.path, content: "x" } : call.tool === "edit_file" ? { path: call.path, old_string: "a", new_string: "b" } : { path: call.path };
    return [tools[call.tool] as Tool, input];
  }
  return [{ name: call.mcp, effect: call.readOnly ? "read" : "execute", subject: () => "" }, call.args];
}

async function decisionOf(row: RuleCase): Promise<{ outcome: string; reason?: string }> {
  let asked = false;
  const ask: PermissionAsker = async () => {
    asked = true;
    return false;
  };
  const policy = new PermissionPolicy({ mode: row.mode, allow: row.allow ?? [], deny: row.deny ?? [], ask });
  const context: ToolContext = { identity: "lead", idempotencyKey: "k", workspace: workspaceOf(), signal: new AbortController().signal };
  const [tool, input] = callOf(row.call);
  const decision = await policy.decide(tool, input, context);
  if (decision.behavior === "allow") return { outcome: "allow" };
  return { outcome: asked ? "ask" : "deny", reason: decision.reason };
}

const label = (row: RuleCase) =>
  `${typeof row.call === "string" ? JSON.stringify(row.call) : JSON.stringify(row.call)} [${row.mode}${row.allow ? ` allow ${row.allow.join(" ")}` : ""}${row.deny ? ` deny ${row.deny.join(" ")}` : ""}] → ${row.expect}`;

describe("the rule table", () => {
  test("has at least 40 rows, allow and deny rules both", () => {
    expect(RULE_TABLE.length).toBeGreaterThanOrEqual(40);
    expect(RULE_TABLE.some((row) => row.allow?.length) && RULE_TABLE.some((row) => row.deny?.length)).toBe(true);
  });

  test.each(RULE_TABLE.map((row) => [label(row), row] as const))("%s", async (_label, row) => {
    const { outcome, reason } = await decisionOf(row);
    expect(`${outcome}${outcome === row.expect ? "" : ` (${reason})`}`).toBe(row.expect);
  });
});
