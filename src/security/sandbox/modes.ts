// Apart from the sandbox code, so a command line is checked without loading it.
export const SANDBOX_MODES = ["read-only", "workspace-write", "danger-full-access"] as const;
