// Plain lists, apart from the schemas that use them: a command line is checked
// against them without loading the configuration code.
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions"] as const;

/** The same modes, strictest first: an untrusted project may only move towards the front (src/config/project-rules.ts). */
export const PERMISSION_MODES_STRICTEST_FIRST = ["plan", "default", "acceptEdits", "bypassPermissions"] as const satisfies readonly (typeof PERMISSION_MODES)[number][];

/** Whether `mode` lets tools do more without asking than `than`. */
export function isLooserMode(mode: (typeof PERMISSION_MODES)[number], than: (typeof PERMISSION_MODES)[number]): boolean {
  return PERMISSION_MODES_STRICTEST_FIRST.indexOf(mode) > PERMISSION_MODES_STRICTEST_FIRST.indexOf(than);
}

/** Where teammates are shown besides the main terminal: nowhere else, or a tmux pane each. */
export const TEAMMATE_PANES = ["off", "tmux"] as const;
export type TeammatePanes = (typeof TEAMMATE_PANES)[number];

/** What the Lead may do itself (`--lead-mode`, config `lead.mode`): "delegate" leaves it only the team's coordination tools. */
export const LEAD_MODES = ["default", "delegate"] as const;
export type LeadMode = (typeof LEAD_MODES)[number];

/** Which teammates get the task-graph tools (config `team.taskTools`): the self-claiming ones, or all. */
export const TASK_TOOLS_CHOICES = ["self-claiming", "all"] as const;
export type TaskToolsChoice = (typeof TASK_TOOLS_CHOICES)[number];
