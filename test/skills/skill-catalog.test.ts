import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SkillCatalog } from "../../src/skills/skill-catalog.ts";
import { loadSkillTool } from "../../src/tools/load-skill.ts";
import { tempDir } from "../support/temp-dir.ts";

function skill(workspace: string, dir: string, text: string) {
  mkdirSync(join(workspace, "skills", dir), { recursive: true });
  writeFileSync(join(workspace, "skills", dir, "SKILL.md"), text);
}

const context = (workspace: string) => ({ identity: "lead", idempotencyKey: "k", workspace, signal: new AbortController().signal });

describe("skills", () => {
  test("the catalog lists name and description; load_skill returns the whole text; unknown names list the available ones", async () => {
    const workspace = tempDir();
    skill(workspace, "sql", "---\nname: sql-review\ndescription: \"Review SQL schemas: keys, indexes, types\"\n---\n# SQL review\nCheck every table.\n");
    skill(workspace, "release", "---\nname: release\ndescription: Cut a release\n---\nSteps...\n");
    skill(workspace, "broken", "no frontmatter here\n");
    const catalog = SkillCatalog.load(workspace);
    expect(catalog.skills.map((s) => s.name)).toEqual(["release", "sql-review"]);
    expect(catalog.problems).toEqual([{ path: join(workspace, "skills/broken/SKILL.md"), problem: expect.stringContaining("frontmatter") }]);
    expect(catalog.promptSection()).toBe(
      "Skills you can load with load_skill when a task calls for one:\n- release: Cut a release\n- sql-review: Review SQL schemas: keys, indexes, types",
    );
    const tool = loadSkillTool(catalog);
    expect((await tool.run({ name: "sql-review" }, context(workspace))).content).toContain("Check every table.");
    await expect(tool.run({ name: "nope" }, context(workspace))).rejects.toThrow("available: release, sql-review");
  });

  test("a workspace without skills has an empty catalog and no prompt section", () => {
    const catalog = SkillCatalog.load(tempDir());
    expect(catalog.skills).toEqual([]);
    expect(catalog.promptSection()).toBe("");
  });
});
