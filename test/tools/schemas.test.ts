import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { baseTools } from "../../src/tools/base-tools.ts";
import { INPUT_SCHEMAS } from "../../src/tools/input-schemas.ts";
import { jsonSchemaOf } from "../../src/tools/json-schema.ts";
import { ToolSpecCache, toolSpecs } from "../../src/tools/schemas.ts";

describe("tool schemas", () => {
  test("the base tools, in order, with the JSON schema the model sees", () => {
    expect(baseTools().map((tool) => tool.name)).toEqual(["shell", "read_file", "write_file", "edit_file", "glob", "grep"]);
    expect(toolSpecs(baseTools())).toMatchSnapshot();
  });

  test("every schema is strict and carries no $schema dialect", () => {
    for (const spec of toolSpecs(baseTools())) {
      expect(spec.parameters).toMatchObject({ type: "object", additionalProperties: false });
      expect(spec.parameters).not.toHaveProperty("$schema");
    }
  });

  test("a built-in tool's JSON schema is the one generated at build time, equal to zod's now", () => {
    // Two tool objects of one schema share the prebuilt JSON: nothing was generated for them at run time.
    const [first, second] = [baseTools()[0]!, baseTools()[0]!];
    const cache = new ToolSpecCache();
    expect(cache.specs([first])[0]!.parameters).toBe(cache.specs([second])[0]!.parameters);
    for (const [name, schema] of Object.entries(INPUT_SCHEMAS)) {
      const [spec] = toolSpecs([{ ...first, name, input: schema }]);
      expect(spec!.parameters).toEqual(jsonSchemaOf(schema));
    }
  });

  test("every input schema the tool modules export is prebuilt", async () => {
    const dir = join(import.meta.dir, "../../src/tools");
    const listed = new Set(Object.values(INPUT_SCHEMAS));
    const missing: string[] = [];
    for (const file of readdirSync(dir).filter((name) => name.endsWith(".ts"))) {
      const module = (await import(join(dir, file))) as Record<string, unknown>;
      for (const [name, value] of Object.entries(module)) {
        if (name.endsWith("Input") && value instanceof z.ZodType && !listed.has(value)) missing.push(`${file}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

