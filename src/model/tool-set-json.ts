import type { ToolSpec } from "./types.ts";

/**
 * The JSON array of an agent's tools in one dialect, kept with the specs: a
 * tool's JSON is built once per spec, and each agent's whole array once per
 * set (kept under its first spec: an agent's specs are its own objects), so
 * agents with tool sets of their own (a Lead and 32 teammates on one client)
 * do not encode theirs again each time another agent's request came between.
 */
export class ToolSetJson {
  readonly #wire: (tool: ToolSpec) => unknown;
  readonly #tools = new WeakMap<ToolSpec, string>();
  readonly #sets = new WeakMap<ToolSpec, { specs: readonly ToolSpec[]; json: string }>();

  /** `wire`: a spec as the dialect's request holds it. */
  constructor(wire: (tool: ToolSpec) => unknown) {
    this.#wire = wire;
  }

  /** The array's JSON; `tools` must not be empty. */
  json(tools: readonly ToolSpec[]): string {
    const kept = this.#sets.get(tools[0]!);
    if (kept && kept.specs.length === tools.length && kept.specs.every((spec, i) => spec === tools[i])) return kept.json;
    const json = `[${tools.map((tool) => this.#tool(tool)).join(",")}]`;
    this.#sets.set(tools[0]!, { specs: [...tools], json });
    return json;
  }

  #tool(tool: ToolSpec): string {
    let json = this.#tools.get(tool);
    if (json === undefined) {
      json = JSON.stringify(this.#wire(tool));
      this.#tools.set(tool, json);
    }
    return json;
  }
}
