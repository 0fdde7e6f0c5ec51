// Plain lists, apart from the schemas that use them: a command line is checked
// against them without loading the configuration code.
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions"] as const;
