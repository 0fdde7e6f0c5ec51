import { describe, expect, test } from "bun:test";
import { baseTools } from "../../src/tools/base-tools.ts";
import { toolSpecs } from "../../src/tools/schemas.ts";

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
});
