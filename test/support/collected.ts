import { heapStats } from "bun:jsc";

/**
 * `count` read after the garbage is collected. Under load a few dead objects
 * outlive one collection (a socket still closing, a conservative stack scan):
 * one collection on a loaded CI machine left up to 18 dead AbortSignals, three
 * with a pause before each left 0 or 1.
 */
export async function collected<T>(count: () => T): Promise<T> {
  for (let round = 0; round < 3; round++) {
    await Bun.sleep(5);
    Bun.gc(true);
  }
  return count();
}

/** How many objects of one type the heap holds once collected: AbortSignal, AbortController… */
export function liveObjects(type: string): Promise<number> {
  return collected(() => heapStats().objectTypeCounts[type] ?? 0);
}

/** How many instances of a class the heap holds once collected, counted in a heap snapshot (its nodes are named by their class). */
export function liveInstances(className: string): Promise<number> {
  return collected(() => {
    const snapshot = JSON.parse(Bun.generateHeapSnapshot("v8")) as { snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[] };
    const { node_fields: fields, node_types: types } = snapshot.snapshot.meta;
    const [type, name] = [fields.indexOf("type"), fields.indexOf("name")];
    let count = 0;
    for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
      if (types[0][snapshot.nodes[i + type]!] === "object" && snapshot.strings[snapshot.nodes[i + name]!] === className) count += 1;
    }
    return count;
  });
}
