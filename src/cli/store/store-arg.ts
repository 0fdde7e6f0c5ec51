import type { ArgsDef } from "citty";

/** `--store` of the admin commands that work on the shared store. */
export const storeArg = {
  store: {
    type: "string",
    valueHint: "url",
    description: "The store: postgres://user@host:5432/db (default: $AGENT_STORE, else config store)",
  },
} as const satisfies ArgsDef;
