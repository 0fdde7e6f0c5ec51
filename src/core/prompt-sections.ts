/**
 * The delimiters of the system prompt's sections that are not the agent's own
 * words. Shared by the prompt builder and the cassette matcher: the environment
 * section (today's date, the git branch) differs from run to run, so a cassette
 * records it as a placeholder and replays regardless of it.
 */
export const ENVIRONMENT_TAG = "environment";
export const PROJECT_INSTRUCTIONS_TAG = "project-instructions";
export const USER_INSTRUCTIONS_TAG = "user-instructions";
export const APPENDED_INSTRUCTIONS_TAG = "appended-instructions";

/** What a cassette holds in place of the environment section. */
export const VOLATILE_PLACEHOLDER = `<${ENVIRONMENT_TAG}>(differs per run: not recorded)</${ENVIRONMENT_TAG}>`;

const ENVIRONMENT_SECTION = new RegExp(`<${ENVIRONMENT_TAG}>\\n[\\s\\S]*?\\n</${ENVIRONMENT_TAG}>`, "g");

/** The text with every environment section replaced by the placeholder. */
export function normaliseVolatileSections(text: string): string {
  return text.replace(ENVIRONMENT_SECTION, VOLATILE_PLACEHOLDER);
}
