/**
 * Whether the terminal shows OSC 8 hyperlinks (a link's text clickable, the
 * URL hidden). Terminals that do not know the sequence may print it as
 * garbage, so only those that say who they are get them; `AGENT_HYPERLINKS`
 * (1 or 0) overrides the guess. Inside tmux or screen the outer terminal is
 * unknown: plain `text (url)`.
 */
export function terminalHyperlinks(env: Record<string, string | undefined>): boolean {
  const forced = env.AGENT_HYPERLINKS;
  if (forced === "1") return true;
  if (forced === "0") return false;
  if ((env.TMUX ?? "") !== "" || (env.TERM ?? "").startsWith("screen")) return false;
  if ((env.WT_SESSION ?? "") !== "") return true;
  if (Number(env.VTE_VERSION ?? "0") >= 5000) return true;
  if ((env.KITTY_WINDOW_ID ?? "") !== "") return true;
  return ["iTerm.app", "WezTerm", "vscode", "ghostty"].includes(env.TERM_PROGRAM ?? "");
}
